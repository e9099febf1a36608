"""The HTML shell of a report: one self-contained file, no script, every text escaped.

A report opens offline: the style sheet is inline, plots are inline SVG, there is no
JavaScript, no font or image from anywhere. Its Content-Security-Policy allows nothing but
that one style sheet (by hash), so even a case text that escaped our escaping could not
run or fetch anything. Every string from a case, a record or a file name goes through
`esc` (or a helper that calls it); markup is only ever built from our own constants.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

CSS = """
:root{--ink:#1a202c;--muted:#5a6473;--line:#d8dde5;--accent:#2b6cb0;--bg:#f7f8fa}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:72rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.15rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1rem 0 .3rem}
.lede{color:var(--muted)}
table{border-collapse:collapse;margin:.4rem 0;background:#fff;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:.25rem .55rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}th{background:#eef1f5}
.grid{display:flex;flex-wrap:wrap;gap:1rem}
.pair>div{flex:1 1 20rem;min-width:0}
figure{margin:0;display:inline-block;vertical-align:top;background:#fff;border:1px solid var(--line);border-radius:6px;padding:.4rem;max-width:100%;box-sizing:border-box}
figure img{max-width:100%;height:auto}
figcaption{font-size:.85rem;color:var(--muted)}
.case{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}
.case summary{cursor:pointer}
.case .text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2rem 0 .6rem}
.case ol{margin:.2rem 0 .6rem;padding-left:1.4rem}.case li{white-space:pre-wrap;overflow-wrap:anywhere}
.label{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:0}
.tag{display:inline-block;border-radius:4px;padding:0 .4rem;background:#eef1f5;margin-right:.3rem}
.bad{background:#fed7d7}.good{background:#c6f6d5}
dl{display:inline-grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;background:#fff;padding:.5rem .8rem;border:1px solid var(--line);border-radius:6px}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere;font-family:ui-monospace,monospace;font-size:.9rem}
footer{color:var(--muted);font-size:.85rem;margin-top:2rem}
""".strip()


def esc(value: Any) -> str:
    """Text for HTML element content or a quoted attribute: & < > " ' escaped."""
    return html.escape(str(value), quote=True)


def fmt(value: Any, digits: int = 3) -> str:
    """A cell: numbers rounded, None/nan as a dash, lists and dicts compact."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        tiny = 0 < abs(value) < 10**-digits  # a p-value of 4e-9 is not 0.000
        return f"{value:.2e}" if tiny else f"{value:.{digits}f}"
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int | float) for v in value)
    ):
        return f"[{fmt(value[0], digits)}, {fmt(value[1], digits)}]"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)[:200]
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A table; every cell is formatted with `fmt` and escaped."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(fmt(cell))}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def definitions(pairs: Iterable[tuple[str, Any]]) -> str:
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(fmt(v))}</dd>" for k, v in pairs)
    return f"<dl>{items}</dl>"


def section(title: str, *parts: str, lede: str | None = None) -> str:
    """A titled section of already-built (escaped) parts."""
    intro = f'<p class="lede">{esc(lede)}</p>' if lede else ""
    return f"<section><h2>{esc(title)}</h2>{intro}{''.join(parts)}</section>"


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"


def grid(figures: Iterable[str]) -> str:
    return f'<div class="grid">{"".join(figures)}</div>'


def paragraph(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def csp() -> str:
    """The report's policy: nothing may load or run; only our own style sheet applies."""
    digest = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"


def document(title: str, subtitle: str, sections: Iterable[str]) -> str:
    """The whole report as one HTML string."""
    body = "".join(sections)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp())}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
        f'<h1>{esc(title)}</h1><p class="lede">{esc(subtitle)}</p>{body}'
        "<footer>Written by llm-judge. One self-contained file: it loads nothing and runs no script.</footer>"
        "</main></body></html>\n"
    )
