"""Agreement with people over time (`judge drift`): windows, each window's figures, the
change against a reference and an alarm held at a false-alarm rate over the stream."""

from __future__ import annotations

from calibration.drift.alarm import Alarm, drift_alarm, kappa_of_tables, past_scan, span_scan
from calibration.drift.stream import DriftOptions, ReferenceTable, drift_report
from calibration.drift.windows import Window, count_windows, parse_time, time_windows

__all__ = [
    "Alarm",
    "DriftOptions",
    "ReferenceTable",
    "Window",
    "count_windows",
    "drift_alarm",
    "drift_report",
    "kappa_of_tables",
    "parse_time",
    "past_scan",
    "span_scan",
    "time_windows",
]
