"""The drift alarm near a ceiling, on repeated labels and over slices: the disagreement
statistic, the smallest detectable drop, the cluster-aware null and the family threshold
(fast checks; the rates by simulation are in test_drift_validity.py, marked slow)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from calibration.agreement.kappa_variance import cell_probabilities
from calibration.drift import Clusters, Watched, detectable_drop, drift_alarm, family_alarm
from calibration.drift.null import _streams
from calibration.drift.statistic import disagreement_rise

D = 1 - np.eye(2)


def _tables(rng, p, sizes):
    return [rng.multinomial(n, p).reshape(2, 2) for n in sizes]


def test_at_a_pass_rate_of_097_a_fall_to_chance_alarms_at_once() -> None:
    """Near one class a window's kappa variance is often 0; the kappa drop divided by it
    gave null scans in the tens and a blind alarm. The disagreement rise does not."""
    rng = np.random.default_rng(21)
    before = cell_probabilities(0.8, 0.97, 0.97).ravel()
    chance = cell_probabilities(0.0, 0.97, 0.97).ravel()
    ref = rng.multinomial(1000, before).reshape(2, 2)
    windows = _tables(rng, before, [200] * 5) + _tables(rng, chance, [200] * 5)
    found = drift_alarm(ref, windows, D, simulations=2000)
    assert found.alarms.index(True) in (5, 6) and found.threshold < 4
    old = drift_alarm(ref, windows, D, simulations=2000, statistic="kappa")
    assert old.threshold > 2 * found.threshold  # the kappa drop's null runs into the tens


def test_the_detectable_drop_is_where_two_windows_pass_the_threshold_with_80_percent() -> None:
    ref = cell_probabilities(0.8, 0.97, 0.97) * 1000
    found = detectable_drop(ref, 200, 2.5, D)
    assert found["reference_kappa"] == pytest.approx(0.8)
    assert found["reference_disagreement"] == pytest.approx(ref[0, 1] * 2 / 1000)
    span = np.array([[0.0, 400 * found["disagreement"]], [0.0, 400 * (1 - found["disagreement"])]])
    x = disagreement_rise(ref, span, D)
    assert x == pytest.approx(2.5 + norm.ppf(0.8))
    smaller = detectable_drop(ref, 50, 2.5, D)
    assert smaller["kappa_drop"] > found["kappa_drop"] > 0  # fewer labels, a larger drop
    assert detectable_drop(ref, 1, 40.0, D)["kappa"] is None  # no rate gets that far


def test_a_cluster_null_stream_is_whole_groups_cut_at_the_streams_length() -> None:
    groups = np.repeat(np.arange(6), [1, 2, 3, 1, 4, 2])
    cells = np.arange(len(groups))
    order = np.argsort(groups, kind="stable")
    counts = np.bincount(groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    streams = _streams(np.random.default_rng(0), cells[order], starts, counts, 50, 4, 10)
    assert streams.shape == (50, 10)
    for row in streams:
        position = 0
        while position < 10:  # each run of cells is one group's, whole (the last may be cut)
            group = groups[row[position]]
            members = cells[groups == group]
            got = row[position : position + len(members)]
            assert got.tolist() == members[: len(got)].tolist()
            position += len(members)


def test_pairs_repeated_in_a_row_widen_the_cluster_null() -> None:
    """Each case twice in a row: the windows vary more than independent pairs would; the
    group null's threshold says so, the independent null's does not."""
    rng = np.random.default_rng(5)
    cells = np.repeat(rng.choice(4, 500, p=cell_probabilities(0.8, 0.5, 0.5).ravel()), 2)
    groups = np.repeat(np.arange(500), 2)
    tables = [np.bincount(cells[w * 100 : (w + 1) * 100], minlength=4).reshape(2, 2)
              for w in range(10)]  # fmt: skip
    plain = drift_alarm(tables[0], tables[1:], D, simulations=2000)
    grouped = drift_alarm(tables[0], tables[1:], D, simulations=2000,
                          clusters=Clusters(cells, groups, True))  # fmt: skip
    assert grouped.threshold > plain.threshold * 1.2


def test_slices_share_one_threshold_above_each_ones_own() -> None:
    rng = np.random.default_rng(6)
    p = cell_probabilities(0.8, 0.6, 0.6).ravel()
    streams = [Watched(*(lambda t: (t[0], t[1:]))(_tables(rng, p, [80] * 6))) for _ in range(4)]
    together = family_alarm(streams, D, simulations=2000)
    alone = [family_alarm([s], D, simulations=2000)[0] for s in streams]
    assert len({a.threshold for a in together}) == 1
    assert together[0].threshold > max(a.threshold for a in alone)
    one = drift_alarm(streams[0].reference, streams[0].windows, D, simulations=2000)
    assert one.threshold == alone[0].threshold  # a family of one is the stream's alarm
