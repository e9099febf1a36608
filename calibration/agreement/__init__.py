"""Agreement of a judge with people, and of people with each other: the kappa family,
confusion and per-class scores (`metrics`), Gwet's AC1 (`coefficients`), Fleiss and
Krippendorff (`multirater`), correlations, and several annotators (`annotators`).
No re-exports: see `calibration/__init__`."""
