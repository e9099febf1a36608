"""The drift alarm's two rates on simulated streams (a reduced `benchmarks/drift.py`):
no drift, any alarm at most alpha; a drop of 0.2 in kappa from 0.9 after the midpoint with
100 labels a window, caught within two windows in at least 80% of streams. Minutes: slow."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.drift import one_stream

pytestmark = pytest.mark.slow
STREAMS = 200


def test_streams_without_drift_alarm_at_most_alpha_of_the_time() -> None:
    rng = np.random.default_rng(440)
    fired = sum(one_stream(rng, 0.8, 0.5, "file", False) is not None for _ in range(STREAMS))
    # alpha plus two binomial standard errors at 200 streams (0.031)
    assert fired / STREAMS <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / STREAMS)


def test_a_drop_of_two_tenths_is_caught_within_two_windows() -> None:
    rng = np.random.default_rng(441)
    first = [one_stream(rng, 0.9, 0.5, "file", True) for _ in range(STREAMS)]
    caught = sum(a is not None and 5 <= a <= 6 for a in first)
    assert caught / STREAMS >= 0.8
