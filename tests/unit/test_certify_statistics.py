"""`calibration.certify`: the exact bound against scipy, the threshold against a brute-force
reference written from the definition, the cascade's budget split and decisions, the
certificate's hash, and the release pass rate against its formula."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from calibration.certify import (
    cascade_deltas,
    certificate_sha256,
    certify_cascade,
    clopper_pearson_upper,
    decide,
    fewest_decided,
    release_pass_rate,
    rung_threshold,
)
from calibration.certify.cascade import exact_interval
from calibration.certify.threshold import first_count


@pytest.mark.parametrize("n", [1, 7, 30, 250, 4000])
@pytest.mark.parametrize("delta", [0.01, 0.05, 0.1, 0.3])
def test_clopper_pearson_upper_matches_scipy_binomtest(n: int, delta: float) -> None:
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        ours = float(clopper_pearson_upper(k, n, delta=delta))
        ref = binomtest(k, n, alternative="less").proportion_ci(1 - delta).high
        assert ours == pytest.approx(ref, abs=1e-10), (k, n)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 400)])
def test_exact_interval_matches_scipy(k: int, n: int) -> None:
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    assert exact_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-10)


def brute_force_threshold(conf, agrees, agreement, delta, start):
    """The definition, literally: sort the distinct confidences descending; for each with at
    least `start` cases at or above it, test `binomtest(k, n, 1 - A, 'less').pvalue <=
    delta` (H0: disagreement >= 1 - A); stop at the first not rejected."""
    chosen = None
    for t in sorted(set(conf), reverse=True):
        decided = [a for c, a in zip(conf, agrees, strict=True) if c >= t]
        if len(decided) < start:
            continue
        k = sum(not a for a in decided)
        if binomtest(k, len(decided), 1 - agreement, alternative="less").pvalue > delta:
            break
        chosen = (t, len(decided), k)
    return chosen


def _reference(conf, agrees, agreement, delta, grid, n):
    if grid != "two":
        start = first_count(agreement, delta, 30, grid, reached=n)  # type: ignore[arg-type]
        return brute_force_threshold(conf, agrees, agreement, delta, start)
    early = first_count(agreement, delta / 2, 30, "late", reached=n)
    found = [
        brute_force_threshold(conf, agrees, agreement, delta / 2, start)
        for start in (early, max(early, n // 3))
    ]
    found = [f for f in found if f is not None]
    return max(found, key=lambda f: f[1]) if found else None


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("grid", ["every", "late", "two"])
def test_threshold_matches_brute_force_reference(seed: int, grid: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 400))
    conf = np.round(0.5 + 0.5 * rng.beta(3, 1, n), 2)  # rounded: ties, as real confidences
    agrees = rng.random(n) < conf - rng.uniform(0, 0.1)
    agreement, delta = float(rng.choice([0.8, 0.85, 0.9])), float(rng.choice([0.05, 0.1, 0.2]))
    got = rung_threshold(conf, agrees, agreement=agreement, delta=delta, grid=grid)  # type: ignore[arg-type]
    ref = _reference(list(conf), list(agrees), agreement, delta, grid, n)
    if ref is None:
        assert got.threshold is None and got.decided == 0
    else:
        assert (got.threshold, got.decided, got.disagreements) == pytest.approx(ref)
        assert got.upper is not None and got.upper <= 1 - agreement
        assert got.upper == pytest.approx(
            float(clopper_pearson_upper(ref[2], ref[1], delta=delta / (2 if grid == "two" else 1)))
        )


def test_a_judge_that_cannot_reach_the_target_decides_nothing() -> None:
    conf = np.linspace(0.5, 1, 500)
    agrees = np.arange(500) % 4 != 0  # 75% agreement at every confidence
    result = rung_threshold(conf, agrees, agreement=0.9, delta=0.1)
    assert result.threshold is None and result.decided == 0 and result.reached == 500


def test_late_start_skips_the_first_unlucky_disagreements() -> None:
    """One disagreement among the 30 most confident stops the test at 30 cases (the
    published start); starting at twice the fewest cases that can certify A rides over it."""
    conf = np.linspace(1, 0.5, 400)
    agrees = np.ones(400, dtype=bool)
    agrees[[3, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159] + list(range(200, 400, 3))] = False
    every = rung_threshold(conf, agrees, agreement=0.9, delta=0.1, grid="every")
    late = rung_threshold(conf, agrees, agreement=0.9, delta=0.1, grid="late")
    assert every.threshold is None
    assert late.threshold is not None and late.decided > 100


def test_fewest_decided_is_where_zero_disagreements_first_certify() -> None:
    for agreement, delta in [(0.9, 0.1), (0.97, 0.05), (0.8, 0.2)]:
        m = fewest_decided(agreement, delta)
        assert clopper_pearson_upper(0, m, delta=delta) <= 1 - agreement
        assert clopper_pearson_upper(0, m - 1, delta=delta) > 1 - agreement


def test_cascade_splits_delta_and_passes_the_rest_on() -> None:
    assert cascade_deltas(0.1, 2) == (0.05, 0.05)
    assert cascade_deltas(0.1, 2, "none") == (0.1, 0.1)
    rng = np.random.default_rng(3)
    n = 2000
    cheap = 0.5 + 0.5 * rng.beta(2, 1, n)
    strong = 0.5 + 0.5 * rng.beta(6, 1, n)
    conf = [cheap, strong]
    agrees = [rng.random(n) < cheap, rng.random(n) < strong]
    result = certify_cascade(conf, agrees, agreement=0.85, delta=0.1)
    t1, t2 = (r.threshold for r in result.rungs)
    assert t1 is not None and t2 is not None
    assert result.rungs[0].reached == n
    assert result.rungs[1].reached == int((cheap < t1).sum())
    by = decide(conf, [t1, t2])
    assert np.array_equal(by, result.decided_by)
    assert (
        result.decided == int((by >= 0).sum()) == result.rungs[0].decided + result.rungs[1].decided
    )
    # each rung's test at delta / 2: its own bound holds at that level
    for r in result.rungs:
        assert r.upper == pytest.approx(
            float(clopper_pearson_upper(r.disagreements, r.decided, delta=0.05))
        )


def test_a_case_without_a_verdict_goes_to_the_next_rung() -> None:
    conf = [np.array([np.nan, 0.9]), np.array([0.95, 0.2])]
    assert decide(conf, [0.5, 0.5]).tolist() == [1, 0]


def test_certificate_hash_is_sha256_of_canonical_json() -> None:
    cert = {"b": 1, "a": [0.5, None], "é": "ü"}
    text = '{"a":[0.5,null],"b":1,"é":"ü"}'
    assert certificate_sha256(cert) == hashlib.sha256(text.encode()).hexdigest()
    assert json.dumps(cert, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == text


def test_release_pass_rate_is_the_weighted_sum_of_its_parts() -> None:
    f = [1, 1, 0, 1, 0, 1]  # the verdicts of 6 labelled decided cases
    y = [1, 0, 0, 1, 0, 1]  # the people's labels of them
    fu = [1] * 10 + [0] * 4  # 14 decided cases nobody labelled
    e = [0, 1, 0, 0]  # every escalated case labelled
    out = release_pass_rate(f, y, fu, e, escalated_total=4)
    from calibration.estimates.ppi import ppi_mean

    decided = ppi_mean(y, f, fu)
    assert out["decided_share"] == pytest.approx(20 / 24)
    assert out["estimate"] == pytest.approx(20 / 24 * decided.estimate + 4 / 24 * 0.25)
    half = 1.959964 * 20 / 24 * decided.std_error
    assert out["ci95"][1] - out["ci95"][0] == pytest.approx(
        min(1, out["estimate"] + half) - max(0, out["estimate"] - half), rel=1e-5
    )
    assert out["escalated"]["exact"] is True


def test_release_pass_rate_says_when_labels_do_not_allow_it() -> None:
    assert release_pass_rate([1], [1], [1, 0], [], escalated_total=0)["estimate"] is None
    out = release_pass_rate([1, 0], [1, 0], [1], [], escalated_total=3)
    assert out["estimate"] is None and "escalated" in out["reason"]
    sampled = release_pass_rate([1, 0], [1, 0], [1], [1, 0], escalated_total=10)
    assert sampled["escalated"]["exact"] is False and not math.isnan(sampled["estimate"])
