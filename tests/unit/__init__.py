"""Unit tests: kinds, rubrics, the rules judge's lexical rules, readers, and the statistics
in calibration/ (pure functions, checked against libraries and published figures)."""
