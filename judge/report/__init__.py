"""Self-contained HTML reports (`--html REPORT.html`) for grades, probes and calibration.

One file each, opening offline: inline style, inline SVG plots, no script, every text
escaped, a Content-Security-Policy that lets nothing load or run. One module a report:
`judge.report.grade`, `judge.report.probe`, `judge.report.calibrate` (each imported by the
command that writes it, so `judge grade` does not load the statistics behind calibration).
"""
