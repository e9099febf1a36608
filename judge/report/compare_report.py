"""The HTML report of `judge compare --html`: what the terminal prints, then the evidence.

Per comparison (B against the baseline A): each metric's paired difference with its 95%
interval (a forest plot and the table), the sign test's p and Holm's corrected p; then,
per rubric, the cases that regressed and those that improved (`judge.report.compare`,
computed by `calibration.compare.changes`), each with its two records side by side
(status, score, label, the judge's claims or rationale), and the cases that could not be
compared with both statuses. Records files are streamed once per rubric and side; only
the cases shown are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.report.cases import read_records, reasons
from judge.report.html import (
    definitions,
    document,
    esc,
    figure,
    fmt,
    paragraph,
    section,
    table,
)
from judge.report.runs import Run
from judge.report.svg import intervals
from judge.report.write import write_html

MAX_PAIRS = 50  # side-by-side cards per rubric and list; --json lists every case
METRIC_HEADERS = ["metric", "n", "A", "B", "diff", "95% CI", "B wins / ties / losses", "p",
                  "p (Holm)", "significant", "left out"]  # fmt: skip
LISTS = {
    "regressed": ("Regressed", "Both runs ok and B scores lower; largest drop first."),
    "improved": ("Improved", "Both runs ok and B scores higher; largest rise first."),
}


def render_compare_report(result: dict[str, Any], runs: Sequence[Run]) -> str:
    """The report as an HTML string; `runs` as read for `compare_runs` (their files give
    the records shown side by side)."""
    by_name = {run.name: run for run in runs}
    sections = [section("Method", paragraph(_method(result)))]
    for comparison in result["comparisons"]:
        a, b = by_name[comparison["a"]], by_name[comparison["b"]]
        sections += _comparison(comparison, a, b)
    if result.get("pass_rates"):
        sections.append(section("Pass rates (ok records)", _pass_rates(result["pass_rates"])))
    title = f"Compare runs against {result['baseline']}"
    return document(title, f"runs: {', '.join(result['runs'])}", sections)


def write_compare_report(path: Path, result: dict[str, Any], runs: Sequence[Run]) -> Path:
    return write_html(path, render_compare_report(result, runs))


def _pass_rates(rows: list[dict[str, Any]]) -> str:
    """Each rubric's pass class, where it came from, and each run's pass rate."""
    head = ["rubric", "pass class", *rows[0]["runs"]]
    body = [[r["rubric"], f"{r['label']} ({r['from']})", *r["rates"]] for r in rows]
    return table(head, body)


def _method(result: dict[str, Any]) -> str:
    return (
        f"Paired over the cases both runs scored. {result['direction']}. 95% interval: "
        f"percentile bootstrap over cases ({result['resamples']} resamples, seed "
        f"{result['seed']}). p: {result['p_value_test']}. Significant: "
        f"{result['correction'].capitalize()}-adjusted p < {result['alpha']:g} over all "
        f"{result['tests']} tests."
    )


def _comparison(comparison: dict[str, Any], a: Run, b: Run) -> list[str]:
    where = f"B = {comparison['b']} vs A = {comparison['a']}"
    metrics = comparison["metrics"]
    plot = intervals(
        [(name, e["diff"], e["ci95"]) for name, e in metrics.items()], "paired differences"
    )
    parts = [
        figure(plot, "diff = mean(B) - mean(A) with its 95% interval"),
        table(METRIC_HEADERS, [_metric_row(name, e) for name, e in metrics.items()]),
        _coverage(comparison),
    ]
    out = [section(where, *parts)]
    for key, (title, lede) in LISTS.items():
        by_rubric = comparison.get(key) or {}
        parts = [_changed(rubric_id, cases, a, b) for rubric_id, cases in by_rubric.items()]
        total = sum(len(cases) for cases in by_rubric.values())
        out.append(section(f"{title} ({total})", *parts, lede=lede))
    apart = {r: cases for r, cases in (comparison.get("not_comparable") or {}).items() if cases}
    if apart:
        rows = [(r, c["id"], c["a"], c["b"]) for r, cases in apart.items() for c in cases]
        out.append(
            section(
                "Not comparable",
                table(["rubric", "id", "status in A", "status in B"], rows),
                lede="Cases in both runs without a score on one side or both: listed "
                "apart, never counted as a change.",
            )
        )
    return out


def _metric_row(name: str, e: dict[str, Any]) -> list[Any]:
    flag = ("yes, higher" if e["diff"] > 0 else "yes, lower") if e["significant"] else "no"
    return [name, e["n"], e["a"], e["b"], e["diff"], e["ci95"],
            f"{e['wins']} / {e['ties']} / {e['losses']}", e["p_value"], e["p_adjusted"], flag,
            e["left_out"]]  # fmt: skip


def _coverage(comparison: dict[str, Any]) -> str:
    rows = [
        (
            rubric_id,
            c["cases_in_both"],
            c["only_a"],
            ", ".join(c["only_a_ids"]),
            c["only_b"],
            ", ".join(c["only_b_ids"]),
        )  # fmt: skip
        for rubric_id, c in comparison["cases"].items()
    ]
    notes = "".join(paragraph(f"note: {note}") for note in comparison["notes"])
    head = ["rubric", "cases in both", "only in A", "ids", "only in B", "ids"]
    return table(head, rows) + notes


def _changed(rubric_id: str, cases: list[dict[str, Any]], a: Run, b: Run) -> str:
    head = f"<h3>{esc(rubric_id)}: {len(cases)}</h3>"
    if not cases:
        return head
    shown = cases[:MAX_PAIRS]
    ids = [c["id"] for c in shown]
    records_a, records_b = _records(a, rubric_id, ids), _records(b, rubric_id, ids)
    cards = [
        _pair(c, records_a.get(c["id"]), records_b.get(c["id"]), open_=i < 5)
        for i, c in enumerate(shown)
    ]
    more = (
        paragraph(f"And {len(cases) - MAX_PAIRS} more, listed in --json.")
        if len(cases) > MAX_PAIRS
        else ""
    )
    return head + "".join(cards) + more


def _records(run: Run, rubric_id: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    rubric = run.rubrics.get(rubric_id)
    if rubric is None or not rubric.records:  # another tool's output: scores only
        return {}
    return read_records(rubric.path, ids)


def _pair(
    case: dict[str, Any], a: dict[str, Any] | None, b: dict[str, Any] | None, *, open_: bool
) -> str:
    """One case: the change in its summary, the two records side by side."""
    state = " open" if open_ else ""
    cls = "bad" if case["diff"] < 0 else "good"
    head = (
        f"<summary><strong>{esc(case['id'])}</strong> "
        f'<span class="tag">A: {esc(fmt(case["a"]))}</span>'
        f'<span class="tag">B: {esc(fmt(case["b"]))}</span>'
        f'<span class="tag {cls}">diff: {esc(fmt(case["diff"]))}</span></summary>'
    )
    sides = "".join(_side(name, record, case[key]) for name, key, record in
                    (("A", "a", a), ("B", "b", b)))  # fmt: skip
    return f'<details class="case"{state}>{head}<div class="grid pair">{sides}</div></details>'


def _side(name: str, record: dict[str, Any] | None, score: float) -> str:
    if record is None:
        return f'<div><p class="label">{esc(name)}</p>{definitions([("score", score)])}</div>'
    facts = definitions(
        [
            ("status", record.get("status")),
            ("score", record.get("score")),
            ("label", record.get("label")),
        ]  # fmt: skip
    )
    why = "".join(f"<li>{esc(line)}</li>" for line in reasons(record))
    listed = f'<p class="label">judge\'s reasons</p><ol>{why}</ol>' if why else ""
    return f'<div><p class="label">{esc(name)}</p>{facts}{listed}</div>'
