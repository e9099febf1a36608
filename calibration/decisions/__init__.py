"""What to do with a judge: readiness, gate conditions (`gates`) over the figures a gate
can name (`figures`), the held-out verdict, and the label budget (`plan`).
No re-exports: see `calibration/__init__`."""
