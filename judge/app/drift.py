"""The drift job: a judge's agreement with people window by window, each window against a
reference, and an alarm whose false-alarm rate over the stream is held at ``alpha``.
The statistics are :mod:`calibration.drift`'s; this module reads the files, picks the
windows, writes the outputs and says which exit the result calls for.

Exit: 3 when the alarm fires (a CI gate), 0 when it does not, 4 when no window beyond the
reference has enough labels to tell (the result says how many each needs; not 1, which a
crash or a failed endpoint exits with), 2 for bad input (:class:`UsageError`, naming file
and line).
"""

from __future__ import annotations

import base64
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from calibration.drift.inputs import DriftInputs, read_drift_inputs, read_reference
from calibration.drift.render import annotate, drift_chart_png, drift_markdown
from calibration.drift.stream import DriftOptions, DriftSlice, drift_report, sliced_drift_report
from calibration.drift.windows import TooManyWindows, Window, count_windows, time_windows
from calibration.errors import CalibrationInputError
from calibration.inference.intervals import MAX_RESAMPLES
from calibration.io.jsonout import dumps_strict, to_strict_json
from calibration.io.labels import LabelSet, labels_from_rows
from judge.app.runs import EXIT_GATE, EXIT_OK, EXIT_TOO_FEW
from judge.engine.atomic import replace_text
from judge.engine.measure.pass_class import among, pass_class_of
from judge.errors import UsageError, refused_not_regular

__all__ = ["DriftRequest", "DriftResult", "run_drift"]

EXIT = {"alarm": EXIT_GATE, "stable": EXIT_OK, "too_few_labels": EXIT_TOO_FEW}


@dataclass(frozen=True)
class DriftRequest:
    """`judge drift RECORDS... --labels LABELS`."""

    records: tuple[Path, ...]
    labels: Path
    by: Literal["day", "week", "month"] | None = None
    window: int | None = None
    reference: str = "first"
    alpha: float = 0.05
    min_labels: int = 30
    time_field: str | None = None
    json: bool = False
    html: Path | None = None
    output: Path | None = None
    seed: int = 0
    bootstrap: int = 2000
    group_field: str | None = None  # pairs in groups: the alarm's null resamples groups
    slice_field: str | None = None  # slices watched under one false-alarm rate
    positive_label: str | None = None


@dataclass(frozen=True)
class DriftResult:
    """The report (strict JSON), the text to print (Markdown, or JSON with `--json`) and
    the exit code its verdict calls for."""

    report: dict[str, Any]
    text: str

    @property
    def exit_code(self) -> int:
        return EXIT[self.report["status"]["verdict"]]


def run_drift(request: DriftRequest) -> DriftResult:
    """Read, window, compare, alarm; write `--html` and `-o`. A UsageError (exit 2) for
    files that cannot be read or joined and for a reference that names no window."""
    _check(request)
    _check_files(request)
    try:
        inputs = _read(request)
        found = among(
            pass_class_of(request.records[0], request.positive_label),
            [*inputs.human, *inputs.judge],
        )
        options = replace(_options(request), positive_label=found.label)
        if request.slice_field:
            report = sliced_drift_report(_slices(request, inputs), options)
        else:
            windows = _windows(request, inputs.ids, inputs.times)
            report = drift_report(
                inputs.ids, inputs.human, inputs.judge, windows, options, inputs.groups
            )
    except (CalibrationInputError, TooManyWindows) as exc:
        raise UsageError(str(exc)) from None
    report.update(_provenance(request, inputs))
    for part in report.get("slices", []):
        part.update(_provenance(request, inputs))
    for part in report.get("slices", [report]):
        annotate(part, found.source)
    report = to_strict_json(report)
    text = dumps_strict(report) + "\n" if request.json else _markdown(report)
    if request.output:
        request.output.parent.mkdir(parents=True, exist_ok=True)
        replace_text(request.output, text)
    if request.html:
        write_drift_html(request.html, report)
    return DriftResult(report, text)


def _check(request: DriftRequest) -> None:
    if (request.by is None) == (request.window is None):
        raise UsageError("judge drift needs one of --by day|week|month or --window N")
    if request.window is not None and request.window < 1:
        raise UsageError("--window N needs N >= 1")
    if not 0 < request.alpha < 1:
        raise UsageError("--alpha must lie between 0 and 1")
    if request.slice_field and request.html:
        raise UsageError("--html draws one stream: leave out --slice-field, or use --json")
    if not 0 <= request.bootstrap <= MAX_RESAMPLES:
        raise UsageError(
            f"--bootstrap {request.bootstrap}: resamples 0 to at most {MAX_RESAMPLES:,}"
        )


def _check_files(request: DriftRequest) -> None:
    """Only regular files (and, for --labels, a folder holding a label store) are read: a
    FIFO would be waited on (each file is opened more than once: its format is sniffed,
    then it is read), a device read without end. A missing file is the reader's to name."""
    named = [("RECORDS", path) for path in request.records] + [("--labels", request.labels)]
    for flag, path in named:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or (flag == "--labels" and stat.S_ISDIR(mode)):
            continue
        raise UsageError(f"{flag} {path}: {refused_not_regular(mode)}")


def _read(request: DriftRequest) -> DriftInputs:
    return read_drift_inputs(
        request.records,
        _labels(request.labels),
        by_time=request.by is not None,
        time_field=request.time_field,
        group_field=request.group_field,
        slice_field=request.slice_field,
    )


def _labels(path: Path) -> Path | LabelSet:
    """A labels file as it is; a `judge label` store (an SQLite file, or a folder holding
    one `*.labels.sqlite`) read directly: every label given, one row per annotator."""
    if path.is_dir():
        stores = sorted(path.glob("*.labels.sqlite"))
        if len(stores) != 1:
            raise UsageError(
                f"--labels {path}: a folder needs one *.labels.sqlite, found {len(stores)}"
            )
        path = stores[0]
    with path.open("rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            return path
    from judge.label.store import LabelStore

    store = LabelStore(path)
    try:
        rows = [
            {
                "id": e.case_id,
                "label": e.label,
                "annotator": e.annotator,
                "labelled_at": e.labelled_at,
            }
            for e in store.events()
            if e.action == "label"
        ]
    finally:
        store.close()
    return labels_from_rows(rows, source=str(path))


def _windows(request: DriftRequest, ids: list[str], times) -> list[Window]:
    if request.window is not None:
        return count_windows(len(ids), request.window)
    assert times is not None and request.by is not None
    return time_windows(times, request.by)


def _slices(request: DriftRequest, inputs: DriftInputs) -> list[DriftSlice]:
    """Each slice's pairs in stream order and its own windows, slices by name."""
    assert inputs.slices is not None
    out = []
    for name in sorted(set(inputs.slices)):
        take = [i for i, s in enumerate(inputs.slices) if s == name]
        times = [inputs.times[i] for i in take] if inputs.times is not None else None
        ids = [inputs.ids[i] for i in take]
        groups = [inputs.groups[i] for i in take] if inputs.groups is not None else None
        out.append(DriftSlice(name, ids, [inputs.human[i] for i in take],
                              [inputs.judge[i] for i in take],
                              _windows(request, ids, times), groups))  # fmt: skip
    return out


def _markdown(report: dict[str, Any]) -> str:
    """One table, or with slices each slice's table under its name and the family's
    verdict."""
    if "slices" not in report:
        return drift_markdown(report)
    parts = [f"## slice {part['slice']}\n\n" + drift_markdown(part) for part in report["slices"]]
    alarm = report["alarm"]
    head = (f"# Judge drift by slice: {len(report['slices'])} slices under one threshold "
            f"({_threshold(alarm['threshold'])}), alpha for the family\n\n")  # fmt: skip
    status = report["status"]
    return head + "\n".join(parts) + f"\n**family {status['verdict']}**: {status['reason']}\n"


def _threshold(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _options(request: DriftRequest) -> DriftOptions:
    options = DriftOptions(
        alpha=request.alpha,
        min_labels=request.min_labels,
        n_bootstrap=request.bootstrap,
        seed=request.seed,
    )
    reference = request.reference
    if reference not in ("first", "past") and Path(reference).exists():
        return replace(options, reference=read_reference(reference))
    return replace(options, reference=reference)


def _provenance(request: DriftRequest, inputs: DriftInputs) -> dict[str, Any]:
    windowing = f"{request.window} labels each, in file order" if request.window else request.by
    return {
        "windowing": windowing,
        "repeats_dropped": inputs.repeats,
        "pairs": _pairs_assumption(request),
        "time_source": inputs.time_source or "file order (no time used)",
        "files": inputs.files,
        "unlabelled_records": inputs.unlabelled,
    }


def _pairs_assumption(request: DriftRequest) -> str:
    """What the alarm's null assumes of the pairs, in words."""
    if request.group_field:
        return (f"in groups by {request.group_field}: groups independent, pairs within a "
                "group related (the null resamples whole groups)")  # fmt: skip
    return ("independent (repeated ids and inputs dropped); a conversation's turns or other "
            "related pairs need --group-field")  # fmt: skip


def write_drift_html(path: Path, report: dict[str, Any]) -> Path:
    """The report as one self-contained HTML file: the chart (PNG, inline) and the table."""
    from judge.report.drift import write_drift_report

    chart = base64.b64encode(drift_chart_png(report)).decode()
    return write_drift_report(path, report, chart)
