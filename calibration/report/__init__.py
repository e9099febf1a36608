"""The calibration result and what is written from it: the result dict (`result`), its
files (`output`: JSON, Markdown, PNG), and the Markdown of `judge compare` and `judge gate`.
Nothing here prints; the command line does. No re-exports: see `calibration/__init__`."""
