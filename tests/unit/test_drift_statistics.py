"""`calibration.drift`: windows, each window's figures, the change test and the alarm."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from calibration.agreement.kappa_variance import cell_probabilities, weighted_kappa_variance
from calibration.agreement.metrics import kappa_from_confusion
from calibration.drift import (
    DriftOptions,
    ReferenceTable,
    count_windows,
    drift_alarm,
    drift_report,
    kappa_of_tables,
    parse_time,
    past_scan,
    span_scan,
    time_windows,
)
from calibration.drift.alarm import kappa_variance_of_tables

FAST = {"n_bootstrap": 200, "simulations": 1000}


def _stream(windows: int, size: int, kappas: list[float], seed: int = 0):
    """Two-class labels, ``size`` a window, window w drawn at kappa ``kappas[w]``."""
    rng = np.random.default_rng(seed)
    human: list[str] = []
    judge: list[str] = []
    for w in range(windows):
        cells = rng.choice(4, size=size, p=cell_probabilities(kappas[w], 0.5, 0.5).ravel())
        human += ["pass" if c // 2 else "fail" for c in cells]
        judge += ["pass" if c % 2 else "fail" for c in cells]
    return [f"c{i}" for i in range(len(human))], human, judge


def test_each_windows_kappa_is_scikit_learns_on_its_pairs() -> None:
    ids, human, judge = _stream(4, 40, [0.8, 0.7, 0.5, 0.3])
    report = drift_report(ids, human, judge, count_windows(len(ids), 40), DriftOptions(**FAST))
    assert report["coefficient"] == "kappa"
    for w, row in enumerate(report["windows"]):
        part = slice(40 * w, 40 * (w + 1))
        assert row["agreement"] == pytest.approx(cohen_kappa_score(human[part], judge[part]))


def test_an_ordinal_scale_uses_linear_weighted_kappa_as_scikit_learn_does() -> None:
    rng = np.random.default_rng(3)
    human = [str(v) for v in rng.integers(1, 6, 120)]
    judge = [str(min(5, max(1, int(h) + int(rng.integers(-1, 2))))) for h in human]
    ids = [f"c{i}" for i in range(120)]
    report = drift_report(ids, human, judge, count_windows(120, 60), DriftOptions(**FAST))
    assert report["coefficient"] == "weighted_kappa"
    scale = ["1", "2", "3", "4", "5"]
    for w, row in enumerate(report["windows"]):
        part = slice(60 * w, 60 * (w + 1))
        expected = cohen_kappa_score(human[part], judge[part], labels=scale, weights="linear")
        assert row["agreement"] == pytest.approx(expected)


def test_batch_kappa_equals_the_projects_kappa_of_each_table() -> None:
    rng = np.random.default_rng(1)
    tables = rng.integers(0, 20, size=(6, 3, 3))
    d = np.abs(np.subtract.outer(np.arange(3), np.arange(3))) / 2
    got = kappa_of_tables(tables, d)
    for table, value in zip(tables, got, strict=True):
        assert value == pytest.approx(kappa_from_confusion(table, weights="linear"))
    assert np.isnan(kappa_of_tables(np.array([[5, 0], [0, 0]]), 1 - np.eye(2)))


def test_batch_kappa_variance_equals_the_projects_fleiss_cohen_everitt_variance() -> None:
    rng = np.random.default_rng(2)
    tables = rng.integers(1, 30, size=(5, 3, 3))
    d = (np.subtract.outer(np.arange(3), np.arange(3)) ** 2) / 4
    got = kappa_variance_of_tables(tables, d)
    for table, value in zip(tables, got, strict=True):
        assert value == pytest.approx(weighted_kappa_variance(table.astype(float), d)[1], rel=1e-12)


def _expand(table) -> tuple[list[int], list[int]]:
    """The pairs behind a 2x2 table (rows people, columns judge)."""
    t = np.asarray(table, dtype=int)
    human = [i for i in range(2) for j in range(2) for _ in range(t[i, j])]
    judge = [j for i in range(2) for j in range(2) for _ in range(t[i, j])]
    return human, judge


def _studentised_drop(reference, table, statistic: str = "kappa") -> float:
    """Kappa: ``(κ_r - κ_s) / sqrt(V_r + V_s)``, from the project's one-table kappa and
    variance. Disagreement: Anscombe's arcsine of each side's disagreement count (from
    scikit-learn's accuracy on the pairs), ``(φ_s - φ_r) / sqrt(1/n_s + 1/n_r)``."""
    d = 1 - np.eye(2)
    ref, tab = np.asarray(reference, float), np.asarray(table, float)
    if statistic == "disagreement":

        def phi(t) -> tuple[float, int]:
            human, judge = _expand(t)
            n = len(human)
            wrong = n * (1 - accuracy_score(human, judge))
            return 2 * np.arcsin(np.sqrt((wrong + 0.375) / (n + 0.75))), n

        (f_r, n_r), (f_s, n_s) = phi(ref), phi(tab)
        return (f_s - f_r) / np.sqrt(1 / n_s + 1 / n_r)
    gap = kappa_from_confusion(ref) - kappa_from_confusion(tab)
    return gap / np.sqrt(weighted_kappa_variance(ref, d)[1] + weighted_kappa_variance(tab, d)[1])


STATISTICS = pytest.mark.parametrize("statistic", ["disagreement", "kappa"])


@STATISTICS
def test_the_scan_is_the_larger_drop_of_the_window_alone_and_pooled_with_the_one_before(
    statistic: str,
) -> None:
    ref = [[40, 10], [10, 40]]
    windows = [[[20, 5], [5, 20]], [[18, 7], [8, 17]], [[17, 8], [9, 16]], [[24, 1], [1, 24]]]
    got = span_scan(ref, windows, 1 - np.eye(2), statistic=statistic)
    alone = [_studentised_drop(ref, w, statistic) for w in windows]
    pooled = [
        _studentised_drop(ref, np.add(a, b), statistic) for a, b in itertools.pairwise(windows)
    ]
    assert got[0] == pytest.approx(alone[0])
    assert got.tolist() == pytest.approx([alone[0], *map(max, zip(alone[1:], pooled, strict=True))])
    # two middling windows pooled say more than either alone; a good window pulls down
    assert pooled[1] > max(alone[1], alone[2]) and got[2] == pytest.approx(pooled[1])
    assert alone[3] < 0 and got[3] == pytest.approx(pooled[2]) and got[3] < got[2]
    longer = span_scan(ref, windows, 1 - np.eye(2), span=3, statistic=statistic)
    three = _studentised_drop(ref, np.add(np.add(windows[0], windows[1]), windows[2]), statistic)
    assert longer[2] == pytest.approx(max(got[2], three))


@STATISTICS
def test_the_past_scan_tests_each_span_against_every_window_before_it_pooled(
    statistic: str,
) -> None:
    windows = [[[20, 5], [5, 20]], [[22, 3], [4, 21]], [[17, 8], [9, 16]], [[15, 10], [9, 16]]]
    got = past_scan(windows, 1 - np.eye(2), statistic=statistic)
    total = np.cumsum(windows, axis=0)
    alone = [_studentised_drop(total[w - 1], windows[w], statistic) for w in (1, 2, 3)]
    pooled = [_studentised_drop(total[w - 2], total[w] - total[w - 2], statistic) for w in (2, 3)]
    assert got[0] == -np.inf  # the first window has no past
    assert got[1:].tolist() == pytest.approx(
        [alone[0], *map(max, zip(alone[1:], pooled, strict=True))]
    )
    assert got[3] == pytest.approx(pooled[1]) and pooled[1] > alone[2]


def test_against_the_past_each_window_is_compared_with_all_the_windows_before_it() -> None:
    kappas = [0.8, 0.8, 0.8, 0.8, 0.35, 0.35]
    ids, human, judge = _stream(6, 100, kappas, seed=10)
    options = DriftOptions(reference="past", **FAST)
    report = drift_report(ids, human, judge, count_windows(600, 100), options)
    assert report["reference"]["kind"] == "past" and report["reference"]["name"] == "1"
    assert report["reference"]["agreement"] is None  # no one band to draw
    first, *rest = report["windows"]
    assert "past" not in first and first["difference"] is None
    for w, row in enumerate(rest, start=1):
        before = slice(0, 100 * w)
        expected = cohen_kappa_score(human[before], judge[before])
        assert row["past"]["n"] == 100 * w
        assert row["past"]["agreement"] == pytest.approx(expected)
        assert row["difference"] == pytest.approx(row["agreement"] - expected)
    assert report["alarm"]["first_window"] in ("5", "6")
    steady = drift_report(ids[:400], human[:400], judge[:400], count_windows(400, 100), options)
    assert steady["status"]["verdict"] == "stable"


def test_count_windows_and_calendar_windows_are_named_by_their_period() -> None:
    assert [w.positions for w in count_windows(5, 2)] == [(0, 1), (2, 3), (4,)]
    times = [parse_time(t) for t in ("2026-12-07T09:00:00Z", "2026-11-30", "2026-12-06")]
    assert all(t is not None for t in times)
    weeks = time_windows([t for t in times if t], "week")
    assert [(w.name, w.positions) for w in weeks] == [("2026-W49", (1, 2)), ("2026-W50", (0,))]
    months = time_windows([t for t in times if t], "month")
    assert [w.name for w in months] == ["2026-11", "2026-12"]
    assert parse_time(1_796_000_000_000_000_000) == parse_time(1_796_000_000)
    assert parse_time(1_796_000_000) == datetime.fromtimestamp(1_796_000_000, UTC)
    assert parse_time("not a time") is None


def test_a_window_with_too_few_labels_says_how_many_it_needs() -> None:
    ids, human, judge = _stream(2, 40, [0.8, 0.8])
    ids, human, judge = ids[:52], human[:52], judge[:52]
    report = drift_report(ids, human, judge, count_windows(52, 40), DriftOptions(**FAST))
    small = report["windows"][1]
    assert small["n"] == 12 and not small["enough"]
    assert small["needs"] == "12 labels, needs 30 (18 more)"
    assert small["alarm"] is False and small["difference"] is None
    assert report["status"]["verdict"] == "too_few_labels"
    assert "needs at least 30" in report["status"]["reason"]


def test_the_change_is_the_difference_with_a_mover_interval() -> None:
    ids, human, judge = _stream(3, 100, [0.8, 0.8, 0.3], seed=5)
    report = drift_report(ids, human, judge, count_windows(300, 100), DriftOptions(**FAST))
    ref, last = report["windows"][0], report["windows"][2]
    assert report["reference"]["name"] == "1"
    assert last["difference"] == pytest.approx(last["agreement"] - ref["agreement"])
    low, high = last["difference_ci95"]
    assert low < last["difference"] < high
    # MOVER: each side's distance to its own bound, added in quadrature
    expected = np.hypot(
        last["agreement"] - last["agreement_ci95"][0], ref["agreement_ci95"][1] - ref["agreement"]
    )
    assert last["difference"] - low == pytest.approx(expected)
    assert "3" in report["alarm"]["windows"]


def test_a_reference_table_is_not_a_window_and_every_window_is_tested() -> None:
    ids, human, judge = _stream(2, 60, [0.8, 0.8], seed=2)
    table = ReferenceTable(("fail", "pass"), ((180, 20), (20, 180)), "calibration.json")
    options = DriftOptions(reference=table, **FAST)
    report = drift_report(ids, human, judge, count_windows(120, 60), options)
    assert report["reference"]["kind"] == "file" and report["reference"]["n"] == 400
    assert report["reference"]["agreement"] == pytest.approx(0.8)
    assert all(row["difference"] is not None for row in report["windows"])


def _null_tables(rng, p, sizes):
    return [rng.multinomial(n, p).reshape(2, 2) for n in sizes]


@pytest.mark.parametrize(("past", "seed"), [(False, 11), (True, 12)])
def test_the_false_alarm_rate_over_a_streams_windows_is_held_at_alpha(
    past: bool, seed: int
) -> None:
    """Against a reference window, and (past) each window against all the windows before."""
    rng = np.random.default_rng(seed)
    p = cell_probabilities(0.7, 0.6, 0.6).ravel()
    streams = 300
    fired = 0
    for s in range(streams):
        ref, *windows = _null_tables(rng, p, [100] * 9)
        alarm = drift_alarm(
            ref, windows, 1 - np.eye(2), alpha=0.05, simulations=500, past=past, seed=s
        )
        fired += any(alarm.alarms)
    # 0.05 plus two binomial standard errors at 300 streams (0.025)
    assert fired / streams <= 0.075


def test_a_lasting_drop_sets_the_alarm_off_at_the_change() -> None:
    rng = np.random.default_rng(4)
    before = cell_probabilities(0.8, 0.5, 0.5).ravel()
    after = cell_probabilities(0.4, 0.5, 0.5).ravel()
    ref = rng.multinomial(400, before).reshape(2, 2)
    windows = _null_tables(rng, before, [100] * 4) + _null_tables(rng, after, [100] * 4)
    alarm = drift_alarm(ref, windows, 1 - np.eye(2), simulations=1000)
    assert alarm.alarms.index(True) in (4, 5)
    assert alarm.p_value < 0.05


def _ordinal(rng, n: int, noise: float) -> tuple[list[str], list[str]]:
    """A 1-5 scale; the judge moves a label by one or two points with probability noise."""
    human = rng.integers(1, 6, n)
    step = rng.choice([-2, -1, 1, 2], size=n) * (rng.random(n) < noise)
    judge = np.clip(human + step, 1, 5)
    return [str(v) for v in human], [str(v) for v in judge]


def test_an_ordinal_stream_alarms_on_its_weighted_kappa_only_when_it_drops() -> None:
    rng = np.random.default_rng(8)
    steady_h, steady_j = _ordinal(rng, 480, 0.2)
    ids = [f"c{i}" for i in range(480)]
    windows = count_windows(480, 80)
    steady = drift_report(ids, steady_h, steady_j, windows, DriftOptions(**FAST))
    assert steady["coefficient"] == "weighted_kappa" and steady["status"]["verdict"] == "stable"
    late_h, late_j = _ordinal(rng, 240, 0.8)
    drifted = drift_report(
        ids, steady_h[:240] + late_h, steady_j[:240] + late_j, windows, DriftOptions(**FAST)
    )
    assert drifted["alarm"]["first_window"] in ("4", "5")
