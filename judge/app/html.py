"""The HTML reports of grade (one rubric; a pass of several: judge.app.grade_many; a jury)
and probe: the glue that writes the report once the job has its result (calibrate's is in judge.cli.calibrate, so grading
never loads the statistics behind calibration; compare's in judge.cli.compare)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.app.edge import note
from judge.errors import UsageError
from judge.report.grade import write_grade_report
from judge.report.jury import write_jury_report
from judge.report.probe import write_probe_report

if TYPE_CHECKING:
    from judge.app.probe import ProbeRequest
    from judge.app.requests import GradeRequest


def check_grade_html(request: GradeRequest) -> None:
    if request.html and (request.batch_api or request.export_batch or request.import_batch):
        raise UsageError(
            "--html works with online grading: once the batch records are written, run "
            "`judge grade INPUT -o RECORDS --html REPORT.html` (records already graded are "
            "kept, not graded again)"
        )


def grade_html(html: Path | None, summary: dict[str, Any], records: Path, cases: Path) -> None:
    if html:
        write_grade_report(html, summary, records, cases)
        note(f"report: {html}")


def check_jury_html(request: GradeRequest) -> None:
    if request.html and request.export_batch:
        raise UsageError(
            "--html needs graded records: export the jurors' requests first, then write the "
            "report with --import-batch DIR --html REPORT.html"
        )


def jury_html(html: Path | None, summary: dict[str, Any], records: Path, cases: Path) -> None:
    """The jury's report: the panel's records and each juror's (named in the summary)."""
    if html:
        jurors = {name: Path(j["records"]) for name, j in summary["jury"]["jurors"].items()}
        write_jury_report(html, summary, records, jurors, cases)
        note(f"report: {html}")


def probe_html(
    request: ProbeRequest, report: dict[str, Any], records: Sequence[Any] | None
) -> list[Path]:
    if not request.html:
        return []
    cases = Path(request.input) if request.input else None
    return [write_probe_report(request.html, report, cases, records)]
