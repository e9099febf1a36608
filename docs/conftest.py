"""`python -m pytest docs`: every example of the docs runs (see docs/_examples.py)."""

from __future__ import annotations

import pytest
from _examples import make_sybil

pytest_collect_file = make_sybil().pytest()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`-n`), a page's examples stay on one worker, in order: its later
    blocks read what its earlier ones wrote in the page's folder."""
    if getattr(config.option, "numprocesses", None):
        config.option.dist = "loadfile"
