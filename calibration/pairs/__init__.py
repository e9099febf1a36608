"""From two label files to a calibration's body: checked pairs in one vocabulary
(`prepare`), the held-out split, the score threshold, every statistic of the pairs
(`analysis`), why the judge errs (`explain`, `covariates`) and the cases that teach it
(`teaching_cases`, for `judge align`). No re-exports: see `calibration/__init__`."""
