"""What to do with a judge: readiness, gate conditions (`gates`) over the figures a gate
can name (`figures`), the held-out verdict, the label budget (`plan`), and the labels per class a claim
needs (`evidence`).
No re-exports: see `calibration/__init__`."""
