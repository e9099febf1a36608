"""The HTML report of a pass of several rubrics (`judge grade --rubric A,B,C --html`).

Each rubric's summary (the grade report's table: all cases and each slice), then, when the
pass grades a retrieval and a generation signal, the two-by-two diagnosis
(`judge.engine.diagnosis`): the grid with counts and rates, the signals and thresholds
used, the cells per slice, and each cell's cases with their text, every rubric's score
and the judges' reasons. Records are streamed; only the cases shown are kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judge.engine.diagnosis import cell_of
from judge.report.cases import MAX_CASES, case_card, read_cases, read_records
from judge.report.grade import summary_table, totals
from judge.report.html import definitions, document, esc, paragraph, section, table
from judge.report.provenance import records_provenance
from judge.report.write import write_html

CELL_NAMES = {
    "retriever_broken": "retriever broken",
    "generator_broken": "generator broken",
    "both_broken": "both low",
    "healthy": "healthy",
}
MAX_CELL_CASES = MAX_CASES  # cards per cell; the ids past it are listed by name
MAX_NAMED = 1000  # ids named past the cards, per cell; --summary FILE.json has them all


def render_pass_report(
    summary: dict[str, Any], files: Mapping[str, Path], cases: Path | None = None
) -> str:
    """The report as an HTML string. `summary` is the pass's (`--summary`: `rubrics` by
    ref, `diagnosis` or None), `files` each rubric ref's records file, `cases` the input."""
    sections = [
        section(ref, summary_table(rubric), totals(rubric))
        for ref, rubric in summary["rubrics"].items()
    ]
    diagnosis = summary.get("diagnosis")
    if diagnosis is None:
        sections.append(
            section(
                "Two-by-two",
                paragraph(
                    "This pass has no two-by-two: it needs a retrieval signal (retrieval, "
                    "context_relevance) and a generation signal (faithfulness, correctness, "
                    "...) in one --rubric list."
                ),
            )
        )
    else:
        sections += _diagnosis(diagnosis, files, cases)
    sections.append(section("Provenance", _provenance(files, cases)))
    refs = ", ".join(summary["rubrics"])
    title = f"Grades: {len(summary['rubrics'])} rubrics on {summary.get('cases', 0)} cases"
    return document(title, f"rubrics: {refs}", sections)


def write_pass_report(
    path: Path, summary: dict[str, Any], files: Mapping[str, Path], cases: Path | None = None
) -> Path:
    return write_html(path, render_pass_report(summary, files, cases))


def _diagnosis(
    diagnosis: dict[str, Any], files: Mapping[str, Path], cases: Path | None
) -> list[str]:
    cells = diagnosis["cells"]
    grid = _grid(cells)
    signals = table(
        ["signal", "rubric", "high at", "cases"],
        [
            (signal, s["rubric"], f">= {s['threshold']:g}", s["cases"])
            for signal, sources in diagnosis["signals"].items()
            for s in sources
        ],
    )
    counts = definitions(
        [("classified", diagnosis["classified"]), ("unclassified", diagnosis["unclassified"])]
    )
    out = [
        section("Two-by-two", grid, counts, signals, _slices(diagnosis), lede=diagnosis["rule"]),
    ]
    groups = [
        (name, CELL_NAMES[name], cell["meaning"], cell["ids"]) for name, cell in cells.items()
    ]
    groups.append(("unclassified", "unclassified", "no scored record for one of the signals",
                   diagnosis["unclassified_ids"]))  # fmt: skip
    out.append(section("Cases by cell", *_cases(groups, files, cases)))
    return out


def _grid(cells: dict[str, Any]) -> str:
    """Retrieval high/low down, generation high/low across; each cell links to its cases."""
    rows = []
    for level in ("high", "low"):
        linked = []
        for generation in ("high", "low"):
            name = cell_of(level, generation)
            text = f"{CELL_NAMES[name]}: {_cell(cells[name])}"
            linked.append(f'<td><a href="#{esc(name)}">{esc(text)}</a></td>')
        rows.append(f"<tr><td>retrieval {level}</td>{''.join(linked)}</tr>")
    head = "<tr><th></th><th>generation high</th><th>generation low</th></tr>"
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _cell(cell: dict[str, Any]) -> str:
    rate = "-" if cell["rate"] is None else f"{cell['rate']:.0%}"
    return f"{cell['count']} ({rate})"


def _slices(diagnosis: dict[str, Any]) -> str:
    rows = [
        [
            name,
            part["classified"],
            *(_cell(part["cells"][c]) for c in CELL_NAMES),
            part["unclassified"],
        ]  # fmt: skip
        for name, part in sorted(diagnosis.get("by_slice", {}).items())
    ]
    if not rows:
        return ""
    return table(["slice", "classified", *CELL_NAMES.values(), "unclassified"], rows)


def _cases(
    groups: Sequence[tuple[str, str, str, list[str]]],
    files: Mapping[str, Path],
    cases: Path | None,
) -> list[str]:
    shown = [i for *_, ids in groups for i in ids[:MAX_CELL_CASES]]
    texts = read_cases(cases, shown)
    records = {ref: read_records(path, shown) for ref, path in files.items()}
    parts = []
    for anchor, name, meaning, ids in groups:
        parts.append(f'<h3 id="{esc(anchor)}">{esc(name)}: {len(ids)}</h3>')
        parts.append(paragraph(meaning.partition(": ")[2] or meaning))
        for index, case_id in enumerate(ids[:MAX_CELL_CASES]):
            judged = [(ref, found.get(case_id)) for ref, found in records.items()]
            tags = [(ref, _score(r), "bad" if _failed(r) else "") for ref, r in judged]
            card = case_card(case_id, texts.get(case_id), None, tags, open_=index < 2, more=judged)
            parts.append(card)
        rest = ids[MAX_CELL_CASES:]
        if rest:
            named = ", ".join(rest[:MAX_NAMED])
            cut = (
                f", ... ({len(rest) - MAX_NAMED} more in --summary)"
                if len(rest) > MAX_NAMED
                else ""
            )
            parts.append(paragraph(f"And {len(rest)} more: {named}{cut}"))
    return parts


def _score(record: dict[str, Any] | None) -> Any:
    if record is None:
        return "no record"
    return record.get("score") if record.get("status") == "ok" else record.get("status")


def _failed(record: dict[str, Any] | None) -> bool:
    return record is None or record.get("status") in ("parse_error", "api_error")


def _provenance(files: Mapping[str, Path], cases: Path | None) -> str:
    pairs: list[tuple[str, Any]] = []
    for ref, path in files.items():
        pairs += [*records_provenance(path), (f"records of {ref}", str(path))]
    pairs.append(("cases", str(cases) if cases else "-"))
    return definitions(pairs)
