"""`python -m pytest docs`: every example of the docs runs (see docs/_examples.py)."""

from _examples import make_sybil

pytest_collect_file = make_sybil().pytest()
