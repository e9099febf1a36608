"""Intervals and tests every statistic shares: Wilson, binomial, normal, bootstrap
(`intervals`), means, paired changes and two-sample tests (`means`), and the logistic
regression with robust errors (`logistic`). No re-exports: see `calibration/__init__`."""
