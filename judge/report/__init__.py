"""Self-contained HTML reports (`--html REPORT.html`) for grades, probes and calibration.

One file each, opening offline: inline style, inline SVG plots, no script, every text
escaped, a Content-Security-Policy that lets nothing load or run.
"""

from judge.report.calibrate import render_calibration_report, write_calibration_report
from judge.report.grade import render_grade_report, write_grade_report
from judge.report.probe import render_probe_report, write_probe_report

__all__ = [
    "render_calibration_report",
    "render_grade_report",
    "render_probe_report",
    "write_calibration_report",
    "write_grade_report",
    "write_probe_report",
]
