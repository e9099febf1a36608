"""The drift alarm's rates on simulated streams (a reduced `benchmarks/drift.py`, in
settings the statistic was not chosen on): no drift, any alarm at most alpha (plus two
binomial standard errors at the streams run); near a ceiling (pass rate 0.97) a fall to
chance and a drop from kappa 0.8 to 0.4 caught within two windows; every case labelled
twice in a row under the group null; four slices under one threshold. Minutes: slow."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.drift import Setting, one_family, one_stream

pytestmark = pytest.mark.slow
STREAMS = 150
BAR = 0.05 + 2 * np.sqrt(0.05 * 0.95 / STREAMS)  # alpha plus two standard errors (0.036)


def _first_alarms(seed: int, setting: Setting, drift: bool) -> list[int | None]:
    rng = np.random.default_rng(seed)
    return [one_stream(rng, setting, drift)[0] for _ in range(STREAMS)]


def _within_two(firsts: list[int | None], setting: Setting) -> float:
    change = setting.change
    return sum(a is not None and change <= a <= change + 1 for a in firsts) / len(firsts)


def test_streams_without_drift_alarm_at_most_alpha_of_the_time() -> None:
    fired = _first_alarms(440, Setting(0.8, None, rate=0.6), False)
    assert sum(a is not None for a in fired) / STREAMS <= BAR


def test_a_drop_of_two_tenths_is_caught_within_two_windows() -> None:
    setting = Setting(0.9, 0.7)
    assert _within_two(_first_alarms(441, setting, True), setting) >= 0.8


NEAR_ONE = Setting(0.8, 0.4, rate=0.97, size=250, windows=8, reference="past")


def test_near_a_ceiling_false_alarms_stay_at_alpha() -> None:
    fired = _first_alarms(442, NEAR_ONE, False)
    assert sum(a is not None for a in fired) / STREAMS <= BAR


@pytest.mark.parametrize(("after", "bar"), [(0.4, 0.5), (0.0, 0.8)])
def test_near_a_ceiling_a_drop_is_caught_within_two_windows(after: float, bar: float) -> None:
    setting = Setting(0.8, after, rate=0.97, size=250, windows=8, reference="past")
    assert _within_two(_first_alarms(443, setting, True), setting) >= bar


def test_every_case_labelled_twice_in_a_row_keeps_false_alarms_at_alpha_with_groups() -> None:
    setting = Setting(0.75, None, rate=0.7, size=80, repeat=2, reference="first", grouped=True)
    fired = _first_alarms(444, setting, False)
    assert sum(a is not None for a in fired) / STREAMS <= BAR


def test_four_slices_alarm_falsely_together_at_most_alpha() -> None:
    rng = np.random.default_rng(445)
    setting = Setting(0.8, None, rate=0.8, size=70, windows=6, reference="first", slices=4)
    together = [one_family(rng, setting)[0] for _ in range(STREAMS)]
    assert sum(together) / STREAMS <= BAR
