"""Comparisons: two systems on the same cases (`runs`, `judge compare`) and two judges on
one human-labelled anchor set (`judges`, `anchor_inputs`, `judge gate`).
No re-exports: see `calibration/__init__`."""
