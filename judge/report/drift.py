"""The HTML report of `judge drift --html`: the verdict, the chart of each window's
agreement with its interval, the reference band and the alarms (a PNG drawn by
`calibration.drift.render` with matplotlib's Agg canvas, inline as a data: image, which the
report's policy allows), and the table of windows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.drift.render import reference_text
from judge.report.html import definitions, document, esc, section, table
from judge.report.write import write_html

__all__ = ["render_drift_report", "write_drift_report"]

_COLUMNS = (
    "window", "n", "agreement", "agreement_ci95", "ac1", "judge_pass_rate",
    "human_pass_rate", "difference", "difference_ci95", "scan", "verdict",
)  # fmt: skip


def _verdict(row: dict[str, Any], reference: dict[str, Any]) -> str:
    if reference.get("kind") != "file" and row["window"] == reference.get("name"):
        return "reference"
    if not row["enough"]:
        return f"too few labels: {row['needs']}"
    return "ALARM" if row["alarm"] else "ok"


def render_drift_report(report: dict[str, Any], chart_png_base64: str) -> str:
    """The report as an HTML string (`report` as `judge drift --json` writes it)."""
    status, alarm, ref = report["status"], report["alarm"], report["reference"]
    cls = "bad" if status["verdict"] == "alarm" else "good"
    caveat = f" ({status['caveat']})" if status.get("caveat") else ""
    verdict = (
        f'<p><span class="tag {cls}">{esc(status["verdict"])}</span>'
        f"{esc(status['reason'] + caveat)}</p>"
        + (f"<p>{esc(status['reading'])}</p>" if status.get("reading") else "")
    )
    image = (
        f'<figure><img alt="agreement by window" src="data:image/png;base64,{chart_png_base64}">'
        "<figcaption>each window's agreement and 95% interval; band: the reference's "
        "interval; red: alarm; grey: too few labels</figcaption></figure>"
    )
    rows = [
        [_verdict(r, ref) if c == "verdict" else r.get(c) for c in _COLUMNS]
        for r in report["windows"]
    ]
    about = definitions(
        [
            (
                "coefficient",
                report["coefficient"] + (f" ({report['weights']})" if report["weights"] else ""),
            ),
            ("windows", report["windowing"]),
            ("time", report["time_source"]),
            ("pass class", _pass_class(report)),
            ("reference", reference_text(ref, report["coefficient"].replace("_", " "))),
            ("alarm", alarm["method"]),
            ("alpha, threshold", f"{alarm['alpha']}, {alarm['threshold']}"),
        ]
    )
    sections = [
        section("Verdict", verdict, about),
        section("Agreement by window", image),
        section("Windows", table(list(_COLUMNS), rows)),
    ]
    subtitle = (
        f"records: {', '.join(report['files']['records'])}; labels: {report['files']['labels']}"
    )
    return document("Judge drift: agreement with people over time", subtitle, sections)


def _pass_class(report: dict[str, Any]) -> str:
    """The label the pass columns count, and where it came from."""
    label = report.get("positive_label")
    if label is None:
        return "none (not two classes)"
    return f"{label} ({report.get('positive_from') or 'the rule for two classes'})"


def write_drift_report(path: Path, report: dict[str, Any], chart_png_base64: str) -> Path:
    return write_html(path, render_drift_report(report, chart_png_base64))
