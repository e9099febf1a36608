"""Label I/O: the one reader of row files (JSONL or CSV), label files and their join,
one label vocabulary for both sides, class order, and strict JSON out.

The lowest layer with `calibration.inference`; light on purpose (no scipy, no scikit-learn):
the grading engine reads rows and strict JSON from here. No re-exports: the public names
are in `calibration/__init__`."""
