"""Small inline SVG plots: bars, histograms, a confusion heatmap, a scatter, a reliability
diagram and interval (forest) plots. Written by hand so a report needs no plotting
library and stays a few kilobytes a plot; every label is escaped; colours are attributes
(the report's CSP allows no inline style).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from judge.report.html import esc, fmt

ACCENT = "#2b6cb0"
MUTED = "#5a6473"
LINE = "#d8dde5"


def _svg(width: int, height: int, title: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}" '
        f'font-family="system-ui,sans-serif" font-size="11"><title>{esc(title)}</title>{body}</svg>'
    )


def _text(
    x: float, y: float, text: str, *, anchor: str = "middle", fill: str = MUTED, extra: str = ""
) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}"{extra}>{esc(text)}</text>'


def bars(labels: Sequence[str], counts: Sequence[int], title: str, *, slot: int = 44) -> str:
    """Vertical bars with their counts; labels under the bars; `slot` pixels a bar."""
    width, height, top, bottom, left = max(180, slot * len(labels) + 30), 170, 18, 36, 14
    peak = max(counts, default=0) or 1
    step = (width - left - 8) / max(len(labels), 1)
    parts = [
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 6}" y2="{height - bottom}" stroke="{LINE}"/>'
    ]
    for i, (label, count) in enumerate(zip(labels, counts, strict=True)):
        h = (height - top - bottom) * count / peak
        x = left + i * step + step * 0.12
        y = height - bottom - h
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{step * 0.76:.1f}" height="{h:.1f}" fill="{ACCENT}"/>'
        )
        parts.append(_text(x + step * 0.38, y - 4, str(count)))
        parts.append(_text(x + step * 0.38, height - bottom + 14, _short(label)))
    return _svg(width, height, title, "".join(parts))


def histogram(values: Sequence[float], title: str, *, levels: Sequence[float] | None = None) -> str:
    """Scores on [0, 1]: one bar per level when the scale has few (a 1-5 scale normalised,
    A/tie/B), else ten bins of width 0.1, each labelled by its range: [0, 0.1), ...,
    [0.9, 1.0], the last closed so a perfect 1.0 counts in the bin its label names."""
    if levels is not None:
        return bars(
            [fmt(v, 2) for v in levels], [sum(v == x for v in values) for x in levels], title
        )
    counts = [0] * 10
    for v in values:
        counts[min(9, max(0, int(v * 10)))] += 1
    return bars(BIN_LABELS, counts, title, slot=48)


#: the ten histogram bins' labels: half-open ranges, the last one closed
BIN_LABELS = [f"{i / 10:.1f}–{(i + 1) / 10:.1f}" for i in range(10)]


def score_levels(values: Sequence[float]) -> list[float] | None:
    """The levels of a coarse scale (every value a multiple of 0.25), else None."""
    distinct = sorted(set(values))
    coarse = all(abs(v * 4 - round(v * 4)) < 1e-9 for v in distinct)
    return distinct if coarse and distinct else None


def _short(label: str, limit: int = 10) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def heatmap(labels: Sequence[str], matrix: Sequence[Sequence[int]], title: str) -> str:
    """Confusion heatmap: rows human, columns judge; each cell its count and row share,
    shaded by the row share (so a rare class's misses are as visible as a common one's)."""
    n = len(labels)
    cell, left, top = 64, 96, 44
    width, height = left + cell * n + 10, top + cell * n + 30
    parts = [_text(left + cell * n / 2, 14, "judge label", fill="#1a202c")]
    parts.append(
        _text(
            12,
            top + cell * n / 2,
            "human label",
            fill="#1a202c",
            extra=f' transform="rotate(-90 12 {top + cell * n / 2:.1f})"',
        )
    )
    for j, label in enumerate(labels):
        parts.append(_text(left + cell * (j + 0.5), top - 8, _short(str(label))))
    for i, row in enumerate(matrix):
        total = sum(row)
        parts.append(_text(left - 6, top + cell * (i + 0.55), _short(str(labels[i])), anchor="end"))
        for j, count in enumerate(row):
            share = count / total if total else 0.0
            x, y = left + cell * j, top + cell * i
            ink = "#ffffff" if share > 0.55 else "#1a202c"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_blue(share)}" stroke="#ffffff"/>'
            )
            parts.append(
                _text(
                    x + cell / 2,
                    y + cell / 2 - 2,
                    str(count),
                    fill=ink,
                    extra=' font-size="14" font-weight="600"',
                )
            )
            parts.append(_text(x + cell / 2, y + cell / 2 + 14, f"{share:.0%}", fill=ink))
    return _svg(width, height, title, "".join(parts))


def _blue(share: float) -> str:
    """White (0) to the accent blue (1)."""
    r, g, b = (int(255 + (c - 255) * share) for c in (43, 108, 176))
    return f"#{r:02x}{g:02x}{b:02x}"


def _axes(
    width: int,
    height: int,
    pad: int,
    xr: tuple[float, float],
    yr: tuple[float, float],
    xlabel: str,
    ylabel: str,
) -> list[str]:
    parts = [
        f'<rect x="{pad}" y="10" width="{width - pad - 10}" height="{height - pad - 10}" fill="none" stroke="{LINE}"/>'
    ]
    for k in range(5):
        fx = xr[0] + (xr[1] - xr[0]) * k / 4
        fy = yr[0] + (yr[1] - yr[0]) * k / 4
        px = pad + (width - pad - 10) * k / 4
        py = height - pad - (height - pad - 20) * k / 4
        parts.append(_text(px, height - pad + 14, f"{fx:.2g}"))
        parts.append(_text(pad - 4, py + 4, f"{fy:.2g}", anchor="end"))
    parts.append(_text(pad + (width - pad) / 2, height - 4, xlabel, fill="#1a202c"))
    parts.append(
        _text(
            12,
            (height - pad) / 2,
            ylabel,
            fill="#1a202c",
            extra=f' transform="rotate(-90 12 {(height - pad) / 2:.1f})"',
        )
    )
    return parts


def _scale(v: float, lo: float, hi: float, a: float, b: float) -> float:
    return a + (b - a) * ((v - lo) / (hi - lo) if hi > lo else 0.5)


def scatter(
    xs: Sequence[float], ys: Sequence[float], title: str, *, xlabel: str, ylabel: str
) -> str:
    """Points (human x, judge y); repeated points darken, so ties on a scale still show."""
    width, height, pad = 320, 260, 44
    xr, yr = _range(xs), _range(ys)
    parts = _axes(width, height, pad, xr, yr, xlabel, ylabel)
    for x, y in zip(xs, ys, strict=True):
        px = _scale(x, *xr, pad + 6, width - 16)
        py = _scale(y, *yr, height - pad - 6, 16)
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{ACCENT}" fill-opacity="0.35"/>'
        )
    return _svg(width, height, title, "".join(parts))


def _range(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)


def reliability(
    points: Sequence[tuple[float, float, int]], title: str, *, xlabel: str, ylabel: str
) -> str:
    """Reliability diagram on [0, 1] x [0, 1]: (mean judge, mean human, n) per bin, the
    diagonal where a calibrated judge's points lie; point area grows with n (the counts
    go in a table beside it: labels on the points would overlap)."""
    width, height, pad = 320, 260, 44
    parts = _axes(width, height, pad, (0.0, 1.0), (0.0, 1.0), xlabel, ylabel)
    x0, x1, y0, y1 = pad, width - 10, height - pad, 10
    parts.append(
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{MUTED}" stroke-dasharray="4 3"/>'
    )
    peak = max((n for _, _, n in points), default=1)
    coords = [(x0 + (x1 - x0) * x, y0 + (y1 - y0) * y, n) for x, y, n in points]
    if len(coords) > 1:
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in coords)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{ACCENT}"/>')
    for px, py, n in coords:
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{3 + 6 * math.sqrt(n / peak):.1f}" fill="{ACCENT}" fill-opacity="0.6"/>'
        )
        parts.append(_text(px + 9, py - 6, f"n={n}", anchor="start"))
    return _svg(width, height, title, "".join(parts))


def intervals(rows: Sequence[tuple[str, float | None, Sequence[float] | None]], title: str) -> str:
    """A forest plot: each estimate as a dot with its interval as a bar, on [0, 1] for rates
    (wider when an estimate, such as a mean change, lies outside it)."""
    left, width, row_h = 190, 520, 24
    height = row_h * len(rows) + 34
    lo, hi = _domain(rows)
    x0, x1 = left, width - 50

    def at(v: float) -> float:
        return x0 + (x1 - x0) * (min(max(v, lo), hi) - lo) / (hi - lo)

    parts = []
    for t in range(5):
        tick = lo + (hi - lo) * t / 4
        parts.append(
            f'<line x1="{at(tick):.1f}" y1="6" x2="{at(tick):.1f}" y2="{height - 22}" stroke="{LINE}"/>'
        )
        parts.append(_text(at(tick), height - 8, f"{tick:.2g}"))
    for i, (name, estimate, ci) in enumerate(rows):
        y = 14 + row_h * i
        parts.append(_text(left - 8, y + 4, name, anchor="end", fill="#1a202c"))
        if ci is not None and all(_finite(v) for v in ci):
            parts.append(
                f'<line x1="{at(ci[0]):.1f}" y1="{y}" x2="{at(ci[1]):.1f}" y2="{y}" stroke="{ACCENT}" stroke-width="3"/>'
            )
        if _finite(estimate):
            assert estimate is not None
            parts.append(f'<circle cx="{at(estimate):.1f}" cy="{y}" r="4.5" fill="#1a202c"/>')
        parts.append(_text(x1 + 6, y + 4, fmt(estimate), anchor="start"))
    return _svg(width, height, title, "".join(parts))


def _finite(value: float | None) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _domain(
    rows: Sequence[tuple[str, float | None, Sequence[float] | None]],
) -> tuple[float, float]:
    values = [
        float(v) for _, e, ci in rows for v in [e, *(ci or [])] if v is not None and _finite(v)
    ]
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    if lo >= 0 and hi <= 1:
        return 0.0, 1.0
    if lo >= -1 and hi <= 1:
        return -1.0, 1.0
    return (lo, hi) if hi > lo else (lo - 1, hi + 1)
