"""A run's agreement with people window by window, for the viewer's drift page: the figures
`judge drift RECORDS --labels LABELS --json` gives for the run's records file and the
viewer's `--labels`, with the command's defaults (--alpha 0.05, --min-labels 30,
--bootstrap 2000, --seed 0, --reference first). The statistics are
:mod:`calibration.drift`'s, called as judge.app.drift calls them (the viewer sits below
judge.app in the layers, so it reads the files the same way rather than import the job).

Windows: `window=N` labelled cases each in file order, or `by=day|week|month` from the
records' time (`time_field`, else case_time, then graded_at, then a trace time). Given neither, by week
when every labelled record has a time, else windows of DEFAULT_WINDOW. Each window also
lists its cases' ids (`ids`), so the page links a window to its records.

The reference is `first`, `past` or a window's name: never a file, since a request must
not name files for the server to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from calibration.errors import CalibrationInputError
from judge.errors import UsageError

if TYPE_CHECKING:  # the statistics are imported on use: the viewer starts without them
    from calibration.drift.inputs import DriftInputs
    from calibration.drift.windows import Window

DEFAULT_WINDOW = 100  # labels a window, where the records carry no time
MAX_WINDOWS = 500  # a chart of more is unreadable (the command's own cap is 2,000)
BOOTSTRAP = 2000  # judge drift's --bootstrap default
PERIODS = ("day", "week", "month")


@dataclass(frozen=True)
class DriftQuery:
    """The choices of `judge drift` a page may make (its defaults where not given)."""

    window: int | None = None
    by: Literal["day", "week", "month"] | None = None
    reference: str = "first"
    alpha: float = 0.05
    min_labels: int = 30
    time_field: str | None = None
    positive_label: str | None = None  # else the records' rubric's (judge drift's rule)

    def problems(self) -> list[str]:
        out = []
        if self.window is not None and self.by is not None:
            out.append("give window=N or by=day|week|month, not both")
        if self.window is not None and not 1 <= self.window <= 1_000_000:
            out.append("window must be 1..1000000")
        if self.by is not None and self.by not in PERIODS:
            out.append("by must be day, week or month")
        if not 0 < self.alpha < 1:
            out.append("alpha must lie between 0 and 1")
        if not 1 <= self.min_labels <= 1_000_000:
            out.append("min_labels must be 1..1000000")
        if (
            max(
                len(self.reference), *(len(v or "") for v in (self.time_field, self.positive_label))
            )
            > 200
        ):
            out.append(
                "reference, time_field and positive_label are names of at most 200 characters"
            )
        return out


def run_drift(records: Path, labels: Path, query: DriftQuery) -> dict[str, Any]:
    """The drift report (strict JSON) of `records` against `labels`; UsageError (one line)
    for files that cannot be read or joined, or a reference that names no window."""
    from calibration.drift.render import annotate
    from calibration.drift.stream import DriftOptions, drift_report
    from calibration.drift.windows import TooManyWindows
    from calibration.io.jsonout import to_strict_json
    from judge.engine.measure.pass_class import among, pass_class_of

    try:
        inputs, windows, windowing = _inputs_and_windows(records, labels, query)
    except TooManyWindows as exc:  # counted before the windows are made
        said = str(exc).replace("--window ", "window=").replace("--by ", "by=")
        raise UsageError(f"at most {MAX_WINDOWS} windows are charted: {said}") from None
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    try:
        found = among(pass_class_of(records, query.positive_label), [*inputs.human, *inputs.judge])
        options = DriftOptions(
            reference=query.reference,
            alpha=query.alpha,
            min_labels=query.min_labels,
            n_bootstrap=BOOTSTRAP,
            seed=0,
            positive_label=found.label,
        )
        report = drift_report(inputs.ids, inputs.human, inputs.judge, windows, options)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    annotate(report, found.source)
    for row, window in zip(report["windows"], windows, strict=True):
        row["ids"] = [inputs.ids[i] for i in window.positions]
    report.update(
        cut=windowing,
        windowing=(
            f"{windowing['window']} labels each, in file order"
            if windowing["window"]
            else windowing["by"]
        ),  # fmt: skip
        time_source=inputs.time_source or "file order (no time used)",
        files={"records": [str(records)], "labels": str(labels)},
        unlabelled_records=inputs.unlabelled,
    )
    return to_strict_json(report)


def _inputs_and_windows(
    records: Path, labels: Path, query: DriftQuery
) -> tuple[DriftInputs, list[Window], dict[str, Any]]:
    """The joined pairs and their windows, and how they were cut (for the page's form)."""
    from calibration.drift.inputs import read_drift_inputs
    from calibration.drift.windows import TooManyWindows, count_windows

    if query.window is None and query.by is None:
        try:  # the records' own time, where they carry one (and not too many weeks of it)
            return _by_time(records, labels, "week", query.time_field)
        except (CalibrationInputError, TooManyWindows):
            pass
        size = DEFAULT_WINDOW
    else:
        size = query.window or 0
    if query.by is not None:
        return _by_time(records, labels, query.by, query.time_field)
    inputs = read_drift_inputs([records], labels)
    windows = count_windows(len(inputs.ids), size, cap=MAX_WINDOWS)
    return inputs, windows, {"by": None, "window": size}


def _by_time(
    records: Path, labels: Path, by: Literal["day", "week", "month"], time_field: str | None
) -> tuple[DriftInputs, list[Window], dict[str, Any]]:
    from calibration.drift.inputs import read_drift_inputs
    from calibration.drift.windows import time_windows

    inputs = read_drift_inputs([records], labels, by_time=True, time_field=time_field)
    assert inputs.times is not None
    return inputs, time_windows(inputs.times, by, cap=MAX_WINDOWS), {"by": by, "window": None}
