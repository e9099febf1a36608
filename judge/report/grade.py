"""The HTML report of a graded set (`judge grade --html`).

Summary table (all cases and each slice), score histograms per slice, judge labels per
slice, the lowest-scored and failed cases with their text and the judge's reasons, and the
provenance: rubric id, version and hash, model, settings and `system_fingerprint`.
The records file is streamed once; only the cases shown are kept.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.engine.records import scan_records
from judge.report.cases import MAX_CASES, case_cards, read_cases
from judge.report.html import definitions, document, figure, grid, section, table
from judge.report.provenance import Provenance
from judge.report.svg import bars, histogram, score_levels
from judge.report.write import write_html

_NOT_STATS = {
    "rubric",
    "kind",
    "cached",
    "judge_models",
    "tokens",
    "estimated_cost_usd",
    "by_slice",
    "run",  # what this run kept, graded and sent: the totals list, not a column
    "jury",  # a panel's own figures: judge.report.jury
}
ALL = "all cases"
FAILED = ("parse_error", "api_error")


@dataclass
class _Scan:
    """What one pass over the records keeps."""

    scores: dict[str, list[float]] = field(default_factory=dict)
    labels: dict[str, Counter[str]] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    lowest: list[tuple[float, int, str, dict[str, Any]]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    best: float | None = None

    def add(self, index: int, record: dict[str, Any]) -> None:
        self.provenance.add(record)
        groups = [ALL, *(record.get("slices") or [])]
        if record.get("status") in FAILED and len(self.failed) < MAX_CASES:
            self.failed.append(record)
        label = record.get("label") or record.get("status")
        for name in groups:
            self.labels.setdefault(name, Counter())[str(label)] += 1
        score = record.get("score")
        if record.get("status") != "ok" or not isinstance(score, int | float):
            return
        for name in groups:
            self.scores.setdefault(name, []).append(float(score))
        self.best = float(score) if self.best is None else max(self.best, float(score))
        item = (-float(score), -index, record["id"], record)  # max-heap of the lowest scores
        if len(self.lowest) < MAX_CASES:
            heapq.heappush(self.lowest, item)
        else:
            heapq.heappushpop(self.lowest, item)


def render_grade_report(summary: dict[str, Any], records: Path, cases: Path | None = None) -> str:
    """The report as an HTML string."""
    scan = _Scan()
    for index, (_, record) in enumerate(scan_records(records)):
        scan.add(index, record)
    # a case at the best score is no "lowest" one: when every case scores alike, none is
    best = scan.best
    lowest = [r for _, _, _, r in sorted(scan.lowest, reverse=True) if best and r["score"] < best]
    shown = read_cases(cases, [r["id"] for r in lowest + scan.failed])
    title = f"Grades: {summary.get('rubric', '?')} on {summary.get('cases', 0)} cases"
    sections = [
        section("Summary", summary_table(summary), totals(summary)),
        section(
            "Scores by slice",
            grid(_histograms(scan)),
            lede="Scores on 0..1; failed and abstained cases are not scored.",
        ),
        section("Judge labels by slice", grid(_label_bars(scan))),
        section(
            "Lowest-scored cases",
            *case_cards((r["id"], shown.get(r["id"]), r, _tags(r)) for r in lowest),
            lede=_lowest_lede(scan, len(lowest)),
        ),
    ]
    if scan.failed:
        cards = case_cards((r["id"], shown.get(r["id"]), r, _tags(r)) for r in scan.failed)
        sections.append(section("Failed cases", *cards))
    sections.append(section("Provenance", _provenance(scan, records, cases)))
    return document(title, f"records: {records}", sections)


def write_grade_report(
    path: Path, summary: dict[str, Any], records: Path, cases: Path | None = None
) -> Path:
    return write_html(path, render_grade_report(summary, records, cases))


def _lowest_lede(scan: _Scan, shown: int) -> str:
    if scan.best is None:
        return "No case was scored."
    if not shown:
        return f"Every scored case has the best score ({scan.best:g}): none is listed."
    return (
        f"Up to {MAX_CASES} graded cases scored below the best score ({scan.best:g}), lowest first."
    )


def _tags(record: dict[str, Any]) -> list[tuple[str, Any, str]]:
    status = record.get("status")
    return [
        ("status", status, "bad" if status in FAILED else ""),
        ("label", record.get("label"), ""),
        ("score", record.get("score"), ""),
    ]


def figures(stats: dict[str, Any]) -> dict[str, Any]:
    """A summary's figures for a table, by name: a dict of figures (`win_rates`,
    `label_rates`, a criterion's) becomes one column per key, `win rates: A`, so no cell
    holds raw JSON; the keys that are no figure (`_NOT_STATS`) are left out."""
    out: dict[str, Any] = {}
    for key, value in stats.items():
        if key in _NOT_STATS or key in ("cases", "status"):
            continue
        name = key.replace("_", " ")
        if isinstance(value, dict):
            out |= {f"{name}: {k}": v for k, v in figures(value).items()}
        else:
            out[name] = value
    return out


#: past this many figures the summary is one row per figure (a retrieval rubric has 18)
WIDE = 8


def summary_table(summary: dict[str, Any]) -> str:
    """All cases and each slice: cases, statuses and every figure of the summary."""
    rows = [(ALL, summary), *summary.get("by_slice", {}).items()]
    flat = [(name, figures(stats)) for name, stats in rows]
    columns = list(dict.fromkeys(c for _, stats in flat for c in stats))
    if len(columns) > WIDE:  # transposed: figures down, slices across, so it fits a page
        body = [
            ["cases", *(stats.get("cases") for _, stats in rows)],
            ["status", *(_statuses(stats.get("status", {})) for _, stats in rows)],
            *([c, *(stats.get(c) for _, stats in flat)] for c in columns),
        ]
        return table(["figure", *(name for name, _ in rows)], body)
    body = [
        [
            name,
            stats.get("cases"),
            _statuses(stats.get("status", {})),
            *(shown.get(c) for c in columns),
        ]  # fmt: skip
        for (name, stats), (_, shown) in zip(rows, flat, strict=True)
    ]
    return table(["slice", "cases", "status", *columns], body)


def _statuses(counts: dict[str, int]) -> str:
    return " ".join(f"{k}: {v}" for k, v in counts.items())


def totals(summary: dict[str, Any]) -> str:
    """Tokens, cached verdicts and cost; and what this run did (`run`: records kept from
    an earlier run, graded now, requests sent) when the summary says."""
    tokens = summary.get("tokens") or {}
    run = summary.get("run") or {}
    named = (("kept from an earlier run", "kept"), ("graded this run", "graded"),
             ("requests sent this run", "sent"))  # fmt: skip
    this_run = [(name, run[key]) for name, key in named if key in run]
    return definitions(
        [
            ("prompt tokens", tokens.get("prompt")),
            ("completion tokens", tokens.get("completion")),
            ("cached verdicts", summary.get("cached")),
            ("estimated cost (USD)", summary.get("estimated_cost_usd")),
            *this_run,
        ]
    )


def _histograms(scan: _Scan) -> list[str]:
    levels = score_levels(scan.scores.get(ALL, []))  # one scale for every slice
    return [
        figure(histogram(values, f"scores: {name}", levels=levels), f"{name}: {len(values)} scored")
        for name, values in _ordered(scan.scores)
    ]


def _label_bars(scan: _Scan) -> list[str]:
    out = []
    for name, counts in _ordered(scan.labels):
        labels = sorted(counts)
        out.append(figure(bars(labels, [counts[k] for k in labels], f"labels: {name}"), name))
    return out


def _ordered(groups: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(ALL, groups[ALL])] * (ALL in groups) + sorted(
        (k, v) for k, v in groups.items() if k != ALL
    )


def _provenance(scan: _Scan, records: Path, cases: Path | None) -> str:
    pairs = scan.provenance.pairs()
    pairs += [("records", str(records)), ("cases", str(cases) if cases else "-")]
    return definitions(pairs)
