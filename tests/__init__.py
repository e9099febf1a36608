"""The project's tests, a regular package so that `tests.*` imports resolve here: ppi-python
(a dev dependency) installs a top-level `tests` package of its own into site-packages."""
