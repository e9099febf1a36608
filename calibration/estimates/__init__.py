"""Estimates of a population figure with the judge's help: the corrected pass rate
(Rogan-Gladen, `rates`, `binary`), prediction-powered means (PPI++, `ppi`,
`prediction_powered`, with the small-sample guards of their intervals in
`ppi_intervals`), and the figures of a bias probe (`probe_stats`).
No re-exports: see `calibration/__init__`."""
