"""Agreement of a judge with people, and of people with each other: the kappa family,
confusion and per-class scores (`metrics`), Gwet's AC1 (`coefficients`), Fleiss and
Krippendorff (`multirater`), correlations, several annotators (`annotators`), and a
panel of judges (`panel`: agreement among jurors, effective number of votes), the
large-sample variance of two-class kappa (`kappa_variance`), and the intervals reported
where a bootstrap of few labels is degenerate (`small_sample`).
No re-exports: see `calibration/__init__`."""
