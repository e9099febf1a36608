"""The HTML report of a bias probe (`judge probe ... --html`).

Read from the probe's JSON report, whatever the probe: every metric `x` that has an
`x_ci95` beside it is a rate (or mean) with its interval, drawn as a forest plot, at the
top level and in each breakdown (`by_injection`, `by_strategy`, ...); every list of ids
is a list of cases to look at, shown with their text; the gate's checks; the provenance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.report.cases import MAX_CASES, case_cards, read_cases
from judge.report.html import definitions, document, esc, figure, grid, paragraph, section, table
from judge.report.svg import intervals
from judge.report.write import write_html

CI = "_ci95"
#: what a probe's metric means, said in words; others lose their underscores
NAMES = {
    "n": "graded pairs",
    "cases": "cases",
    "raised": "pairs raised",
    "lowered": "pairs lowered",
    "unchanged": "pairs unchanged",
    "share_raised": "share of pairs raised",
    "share_lowered": "share of pairs lowered",
    "mean_score_change": "mean score change (padded - original)",
    "wilcoxon_p_value": "Wilcoxon signed-rank p-value",
    "score_changes_total": "pairs whose score changed",
    "raised_ids": "cases raised by a padding",
    "lowered_ids": "cases lowered by a padding",
}


def fmt_p(value: Any) -> Any:
    """A p-value cell: `< 0.001` below that (never `0.000`), else the number."""
    tiny = isinstance(value, int | float) and math.isfinite(value) and value < 0.001
    return "< 0.001" if tiny else value


def metric_name(key: str) -> str:
    """A metric's name for a reader: `share_lowered` -> "share of pairs lowered"."""
    return NAMES.get(key, key.replace("_", " "))


_PROVENANCE = ("probe", "rubric", "rubric_sha256", "judge", "judge_model", "judge_family", "input")


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _estimates(block: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(metric, estimate, interval) for each `x` with an `x_ci95` in `block`."""
    return [(k, block.get(k), block[k + CI]) for k in block if k + CI in block]


def _breakdowns(report: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """Blocks like `by_injection`: {member: {metric...}} whose members carry intervals."""
    return {
        key: value
        for key, value in report.items()
        if isinstance(value, dict)
        and value
        and all(isinstance(v, dict) for v in value.values())
        and any(_estimates(member) for member in value.values())
    }


def _id_lists(report: dict[str, Any], prefix: str = "") -> list[tuple[str, list[str]]]:
    """Every non-empty list of strings (ids, or `id:detail` entries), with its path."""
    found: list[tuple[str, list[str]]] = []
    for key, value in report.items():
        name = f"{prefix}{key}"
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if key.endswith("ids") or key in ("flipped",) or prefix.endswith("ids."):
                found.append((name, value))
        elif isinstance(value, dict) and key.endswith("ids"):
            found += _id_lists(value, f"{name}.")
    return found


def render_probe_report(
    report: dict[str, Any], cases: Path | None = None, records: Sequence[Any] | None = None
) -> str:
    """The report as an HTML string. `records` (the probe's records, when it has some)
    give the judge's reasons for the cases shown."""
    kind = report.get("probe", "probe")
    headline = [
        (metric_name(k), fmt_p(v) if k.endswith("p_value") else v, report.get(k + CI))
        for k, v in report.items()
        if _is_scalar(v) and not k.endswith(CI) and k not in _PROVENANCE
    ]
    sections = [section("Figures", table(["metric", "value", "95% interval"], headline))]
    rates = [(metric_name(k), v, ci) for k, v, ci in _estimates(report)]
    if rates:
        sections.append(
            section(
                "Rates with 95% intervals",
                figure(intervals(rates, f"{kind} rates"), "dot: estimate; bar: 95% interval"),
            )
        )
    for name, block in _breakdowns(report).items():
        metrics = dict.fromkeys(m for member in block.values() for m, _, _ in _estimates(member))
        plots = [
            figure(
                intervals(
                    [(member, row.get(m), row.get(m + CI)) for member, row in block.items()],
                    f"{m} {name}",
                ),
                f"{metric_name(m)}, {name.replace('_', ' ')}",
            )
            for m in metrics
        ]
        sections.append(section(name.replace("_", " "), grid(plots)))
    if report.get("score_changes"):
        sections.append(_score_changes(report, cases))
    sections.append(_gate(report.get("gate")))
    sections.append(_flagged(report, cases, records))
    sections.append(
        section("Provenance", definitions((k, report.get(k)) for k in _PROVENANCE if k in report))
    )
    subtitle = f"judge {report.get('judge', '?')}, rubric {report.get('rubric', '?')}"
    return document(f"Bias probe: {kind}", subtitle, sections)


def write_probe_report(
    path: Path,
    report: dict[str, Any],
    cases: Path | None = None,
    records: Sequence[Any] | None = None,
) -> Path:
    return write_html(path, render_probe_report(report, cases, records))


def _gate(gate: dict[str, Any] | None) -> str:
    if not gate or not gate.get("checks"):
        return section("Gate", paragraph("No gate was asked for (--fail-if, --fail-if-biased)."))
    rows = [
        (
            c.get("condition") or c.get("check"),
            c.get("value", c.get("estimate")),
            c.get("interval"),
            f"{c['status']} (fails: {c['reason']})" if c.get("reason") else c["status"],
        )
        for c in gate["checks"]
    ]
    verdict = "FAILED" if gate.get("failed") else "passed"
    return section(f"Gate: {verdict}", table(["check", "value", "interval", "status"], rows))


def _flagged(report: dict[str, Any], cases: Path | None, records: Sequence[Any] | None) -> str:
    lists = _id_lists(report)
    if not lists:
        return section("Cases to look at", paragraph("The probe flagged no case."))
    shown = [(name, entries[:MAX_CASES], len(entries)) for name, entries in lists]
    texts = read_cases(cases, {c for _, entries, _ in shown for e in entries for c in _ids(e)})
    by_id = {_get(r, "id"): _dump(r) for r in records or ()}
    parts = []
    for name, entries, total in shown:
        rows = []
        for entry in entries:
            case_id = next((c for c in _ids(entry) if c in texts or c in by_id), entry)
            rows.append((entry, texts.get(case_id), by_id.get(case_id), [("in", name, "")]))
        more = f" (first {MAX_CASES} of {total})" if total > MAX_CASES else ""
        parts.append(f"<h3>{esc(metric_name(name))}: {total}{more}</h3>")
        parts += case_cards(rows, open_first=2)
    return section("Cases to look at", *parts)


def _score_changes(report: dict[str, Any], cases: Path | None) -> str:
    """Each changed pair: the original and padded scores, and the padded answer itself
    (rebuilt from the case, as the probe built it) when the cases are at hand."""
    from judge.probes.verbosity import pad  # the probes load statistics: only when drawn

    changes = report["score_changes"]
    texts = read_cases(cases, {c["id"] for c in changes})
    rows = []
    for c in changes[:MAX_CASES]:
        case = texts.get(c["id"])
        padded = pad(case.answer or "", case.question or "", c["padding"]) if case else None
        rows.append((c["id"], c["padding"], c["score"], c["padded_score"], padded or "-"))
    total = report.get("score_changes_total", len(changes))
    shown = min(len(changes), MAX_CASES)
    hint = "" if cases else " Pass --cases FILE (or probe from a file) to show each padded answer."
    return section(
        "Score changes",
        table(["case", "padding", "score", "padded score", "padded answer"], rows),
        lede=f"{shown} of the {total} pairs whose score changed, the largest change first.{hint}",
    )


def _ids(entry: str) -> list[str]:
    """The case id an entry may name: itself, or (injection) `id:injection:placement`."""
    return [entry, entry.rsplit(":", 2)[0]] if entry.count(":") >= 2 else [entry]


def _get(record: Any, name: str) -> Any:
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def _dump(record: Any) -> dict[str, Any]:
    return record if isinstance(record, dict) else record.model_dump()
