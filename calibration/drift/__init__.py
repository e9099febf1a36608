"""Agreement with people over time (`judge drift`): windows, each window's figures, the
change against a reference and an alarm held at a false-alarm rate over the stream."""

from __future__ import annotations

from calibration.drift.alarm import (
    Alarm,
    Watched,
    drift_alarm,
    family_alarm,
    kappa_of_tables,
    past_scan,
    span_scan,
)
from calibration.drift.null import Clusters
from calibration.drift.statistic import detectable_drop
from calibration.drift.stream import (
    DriftOptions,
    DriftSlice,
    ReferenceTable,
    drift_report,
    sliced_drift_report,
)
from calibration.drift.windows import Window, count_windows, parse_time, time_windows

__all__ = [
    "Alarm",
    "Clusters",
    "DriftOptions",
    "DriftSlice",
    "ReferenceTable",
    "Watched",
    "Window",
    "count_windows",
    "detectable_drop",
    "drift_alarm",
    "drift_report",
    "family_alarm",
    "kappa_of_tables",
    "parse_time",
    "past_scan",
    "sliced_drift_report",
    "span_scan",
    "time_windows",
]
