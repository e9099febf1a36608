"""The HTML report of a calibration (`judge calibrate --html`).

Built from the result dict `calibration.report.result.calibrate` returns (calibration/ knows
nothing of this module): the readiness verdict and its reasons, the agreement figures with
intervals, the confusion heatmap (rows human, columns judge: counts and row shares),
per-class figures, for numeric labels a scatter and a reliability diagram, per-slice
readiness, the worst disagreements with their case text (`--cases`) and the judge's
reasons (when the judge file is graded records), and the provenance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.io.jsonout import to_strict_json
from judge.report.cases import MAX_CASES, case_cards, read_cases, read_records
from judge.report.html import definitions, document, esc, figure, grid, paragraph, section, table
from judge.report.pairs import paired_values, reliability_points
from judge.report.provenance import records_provenance
from judge.report.svg import heatmap, reliability, scatter
from judge.report.write import write_html
from judge.rubric import file_sha256

_FIGURES = (
    ("n", "matched cases"),
    ("observed_agreement", "observed agreement"),
    ("expected_agreement", "expected agreement (chance)"),
    ("kappa", "Cohen's kappa"),
    ("kappa_ci95", "kappa 95% interval"),
    ("ac1", "Gwet's AC1"),
    ("ac1_ci95", "AC1 95% interval"),
    ("krippendorff_alpha", "Krippendorff's alpha (nominal)"),
    ("weighted_kappa", "weighted kappa"),
    ("weighted_kappa_ci95", "weighted kappa 95% interval"),
    ("balanced_accuracy", "balanced accuracy"),
    ("mae", "mean absolute error"),
    ("exact_agreement", "exact agreement"),
    ("adjacent_agreement", "within one step"),
)


def render_calibration_report(result: dict[str, Any], cases: Path | None = None) -> str:
    """The report as an HTML string (`result` as `calibrate` returns it)."""
    result = to_strict_json(result)
    settings = result.get("settings") or {}
    sections = [
        _verdict(result),
        section("Agreement", table(["figure", "value"], _figure_rows(result))),
    ]
    matrix = result.get("confusion_matrix")
    if matrix:
        plot = heatmap(matrix["labels"], matrix["matrix"], "confusion matrix")
        sections.append(
            section(
                "Confusion matrix",
                figure(
                    plot,
                    "rows: human label; columns: judge label; each cell: count and share of its row",
                ),
                _per_class(result),
            )
        )
    sections += _numeric(result, settings)
    if result.get("slices"):
        sections.append(_slices(result["slices"]))
    sections.append(_disagreements(result, settings, cases))
    sections.append(section("Provenance", _provenance(result, settings, cases)))
    subtitle = f"judge: {settings.get('judge_file', '?')}; human: {settings.get('human_file', '?')}"
    return document("Calibration against human labels", subtitle, sections)


def write_calibration_report(path: Path, result: dict[str, Any], cases: Path | None = None) -> Path:
    return write_html(path, render_calibration_report(result, cases))


def _verdict(result: dict[str, Any]) -> str:
    readiness = result.get("readiness", "?")
    cls = {"gate_ready": "good", "not_ready": "bad"}.get(readiness, "")
    reasons = "".join(f"<li>{esc(r)}</li>" for r in result.get("readiness_reasons") or [])
    head = f'<p><span class="tag {cls}">readiness: {esc(readiness)}</span></p>'
    return section("Verdict", head, f"<ul>{reasons}</ul>")


def _figure_rows(result: dict[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [
        (name, result[key]) for key, name in _FIGURES if result.get(key) is not None
    ]
    unmatched = result.get("unmatched") or {}
    rows.append(
        (
            "judge-only / human-only ids",
            f"{unmatched.get('judge_only', 0)} / {unmatched.get('human_only', 0)}",
        )
    )
    rows += _pass_rates(result.get("binary"))
    for name, value in (result.get("correlation") or {}).items():
        rows.append((f"{name} correlation", value))
    inter = result.get("inter_annotator")
    if inter:
        rows.append((f"inter-annotator ceiling ({inter.get('method')})", inter.get("ceiling")))
        rows.append(("Krippendorff's alpha", inter.get("krippendorff_alpha")))
    return rows


def _pass_rates(binary: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The pass rates of a two-class calibration, the corrected (Rogan-Gladen) one with the
    reason when it is undefined, as report.md gives them."""
    if not binary:
        return []
    judged = binary.get("judged") or {}
    corrected = binary.get("corrected_pass_rate")
    source = binary.get("positive_from") or "calibration's rule for two classes"
    rows: list[tuple[str, Any]] = [
        ("pass class", f"{binary.get('positive_label')} ({source})"),
        ("judge pass rate, labelled cases", binary.get("judge_pass_rate")),
        (f"judge pass rate, all {judged.get('n', '?')} judged cases", judged.get("pass_rate")),
        ("human pass rate, labelled cases", binary.get("human_pass_rate")),
        ("corrected pass rate (Rogan-Gladen)", corrected),
        ("corrected pass rate 95% interval", binary.get("corrected_pass_rate_ci95")),
    ]
    if corrected is None and binary.get("corrected_pass_rate_reason"):
        rows.append(("corrected pass rate undefined", binary["corrected_pass_rate_reason"]))
    return rows


def _per_class(result: dict[str, Any]) -> str:
    per = result.get("per_class") or {}
    rows = [
        (k, v.get("precision"), v.get("recall"), v.get("f1"), v.get("support"))
        for k, v in per.items()
    ]
    return table(["class", "precision", "recall", "F1", "human support"], rows) if rows else ""


def _numeric(result: dict[str, Any], settings: dict[str, Any]) -> list[str]:
    pairs = paired_values(settings)
    if pairs is None:
        return []
    human, judge = pairs
    figures = []
    if human.numeric:
        plot = scatter(
            human.values,
            judge.values,
            "judge against human",
            xlabel=f"human {human.field}",
            ylabel=f"judge {judge.field}",
        )
        figures.append(figure(plot, f"{len(human.values)} matched cases"))
    points, ylabel = reliability_points(
        human, judge, (result.get("threshold") or {}).get("positive_label")
    )
    if points:
        plot = reliability(points, "reliability", xlabel="judge score (0..1)", ylabel=ylabel)
        figures.append(
            figure(plot, "bins of judge score; on the dashed line the judge is calibrated")
        )
    return [section("Scores", grid(figures))] if figures else []


def _slices(slices: dict[str, Any]) -> str:
    rows = [
        (
            name,
            s.get("n"),
            s.get("kappa"),
            s.get("kappa_ci95"),
            s.get("observed_agreement"),
            s.get("readiness"),
        )
        for name, s in slices.items()
    ]
    return section(
        "By slice", table(["slice", "n", "kappa", "95% interval", "agreement", "readiness"], rows)
    )


def _disagreements(result: dict[str, Any], settings: dict[str, Any], cases: Path | None) -> str:
    rows = (result.get("disagreements") or [])[:MAX_CASES]
    if not rows:
        return section(
            "Disagreements", paragraph("The judge and the humans agree on every matched case.")
        )
    ids = [r["id"] for r in rows]
    texts = read_cases(cases, ids)
    judge_file = settings.get("judge_file")
    records = read_records(Path(judge_file), ids) if judge_file else {}
    cards = case_cards(
        (
            r["id"],
            texts.get(r["id"]),
            records.get(r["id"]),
            [("human", r["human"], "good"), ("judge", r["judge"], "bad")]
            + ([("distance", r["distance"], "")] if "distance" in r else []),
        )
        for r in rows
    )
    hint = "" if cases else " Pass --cases FILE to show each case's text."
    return section(
        "Worst disagreements", *cards, lede=f"Up to {MAX_CASES}, the costliest first.{hint}"
    )


def _provenance(result: dict[str, Any], settings: dict[str, Any], cases: Path | None) -> str:
    pairs: list[tuple[str, Any]] = []
    for key in ("judge_file", "human_file"):
        path = settings.get(key)
        if path and Path(path).is_file():
            pairs += [
                (key.replace("_", " "), path),
                (f"{key.split('_')[0]} file sha256", file_sha256(Path(path))),
            ]
    judge_file = settings.get("judge_file")
    pairs += records_provenance(Path(judge_file)) if judge_file else []
    pairs += [
        (f"setting {k}", v)
        for k, v in settings.items()
        if k not in ("judge_file", "human_file", "cases_file") and v is not None
    ]
    pairs.append(("cases", str(cases) if cases else "-"))
    return definitions(pairs)
