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
from calibration.certify.pooled import pooled_path
from calibration.certify.threshold import chain_starts, first_count
from calibration.inference.intervals import wilson_interval


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


def brute_force_relay(conf, agrees, agreement, delta, n):
    """The relay written as its graph (Bretz et al. 2009), from the definition: nodes = the
    distinct confidences descending from the first chain start; each chain of `CHAINS`
    puts its share of delta on the first node with at least its start's decided count
    (`max(late start at its own level, its share of the cases)`); repeat until nothing
    changes: a node not yet rejected whose exact p-value (`binomtest`) is at most the
    level it holds is rejected and hands that level to the next node down. The lowest
    rejected node wins."""
    starts = chain_starts(agreement, delta, 30, n)  # counts only: tested on their own below
    points = []
    for t in sorted(set(conf), reverse=True):
        decided = [a for c, a in zip(conf, agrees, strict=True) if c >= t]
        points.append((t, len(decided), sum(not a for a in decided)))
    nodes = [p for p in points if p[1] >= min(s for s, _ in starts)]
    level = [0.0] * len(nodes)
    for start, w in starts:
        first = next((i for i, p in enumerate(nodes) if p[1] >= start), None)
        if first is not None:
            level[first] += w * delta
    rejected = [False] * len(nodes)
    changed = True
    while changed:
        changed = False
        for i, (_, m, k) in enumerate(nodes):
            p = binomtest(k, m, 1 - agreement, alternative="less").pvalue
            if not rejected[i] and level[i] > 0 and p <= level[i]:
                rejected[i], changed = True, True
                later = [j for j in range(i + 1, len(nodes)) if not rejected[j]]
                if later:  # the next node down not yet rejected
                    level[later[0]] += level[i]
    done = [p for p, r in zip(nodes, rejected, strict=True) if r]
    return max(done, key=lambda p: p[1]) if done else None


def _reference(conf, agrees, agreement, delta, grid, n):
    if grid == "relay":
        return brute_force_relay(conf, agrees, agreement, delta, n)
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
@pytest.mark.parametrize("grid", ["every", "late", "two", "relay"])
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
        if grid != "relay":  # the relay's level depends on the path (half or whole delta)
            assert got.upper == pytest.approx(
                float(
                    clopper_pearson_upper(ref[2], ref[1], delta=delta / (2 if grid == "two" else 1))
                )
            )


def test_the_relay_chains_start_apart_with_cases_enough_and_join_with_few() -> None:
    # 250 cases at A 0.85, delta 0.1: the late start at delta/3 (c = 21: max(30, 21,
    # min(42, 83))), a quarter and half of the cases, a third of delta each
    assert chain_starts(0.85, 0.1, 30, 250) == [(42, 1 / 3), (62, 1 / 3), (125, 1 / 3)]
    # 50 cases at A 0.9: a quarter (12) and half (25) are not past the late start of the
    # joined level, so one chain at the whole delta from the plain late start (30)
    assert [(s, round(w, 9)) for s, w in chain_starts(0.9, 0.1, 30, 50)] == [(30, 1.0)]
    assert chain_starts(0.9, 0.1, 30, 50)[0][0] == first_count(0.9, 0.1, 30, "late", reached=50)


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
    result = certify_cascade(conf, agrees, agreement=0.85, delta=0.1, split="bonferroni")
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
    # every escalated case labelled: the interval is the decided share's, scaled by its weight
    low, high = out["decided"]["ci95"]
    theta = out["estimate"]
    assert out["ci95"] == pytest.approx(
        [theta - 20 / 24 * (decided.estimate - low), theta + 20 / 24 * (high - decided.estimate)]
    )
    # 6 labelled decided cases: at least Wilson's interval of their labels (3 of 6 pass)
    wilson = wilson_interval(3, 6)
    assert low <= wilson[0] and high >= wilson[1]
    assert out["escalated"]["exact"] is True


def _release_coverage(n_decided_labelled: int, n_escalated_labelled: int, draws: int) -> float:
    """How often the release interval holds the true pass rate of 240 cases (200 decided,
    a judge wrong on 3% of them near a 0.92 pass rate; 40 escalated at 0.6), people
    labelling a random sample of each share."""
    rng = np.random.default_rng(n_decided_labelled * 100 + n_escalated_labelled)
    held = 0
    for _ in range(draws):
        y = (rng.random(200) < 0.92).astype(float)
        f = np.where(rng.random(200) < 0.03, 1 - y, y)
        e = (rng.random(40) < 0.6).astype(float)
        truth = (y.sum() + e.sum()) / 240
        order = rng.permutation(200)
        lab, unl = order[:n_decided_labelled], order[n_decided_labelled:]
        esc = rng.permutation(40)[:n_escalated_labelled]
        out = release_pass_rate(f[lab], y[lab], f[unl], e[esc], escalated_total=40)
        held += out["ci95"][0] <= truth <= out["ci95"][1]
    return held / draws


def test_release_interval_says_when_a_share_was_widened() -> None:
    # 4 of 12 escalated cases labelled, all passing: the normal interval has width 0
    out = release_pass_rate([1] * 40, [1] * 40, [1] * 100, [1, 1, 1, 1], escalated_total=12)
    assert out["escalated"]["exact"] is False
    assert "escalated share widened" in out["ci95_note"] and "do not vary" in out["ci95_note"]
    low = wilson_interval(4, 4)[0]
    w_e = 12 / 152
    assert out["ci95"][0] <= out["estimate"] - w_e * (1 - low) + 1e-12


@pytest.mark.parametrize(("decided", "escalated"), [(3, 3), (5, 40), (10, 5), (100, 20)])
def test_release_interval_holds_the_truth_with_few_labels(decided: int, escalated: int) -> None:
    """A figure never firmer than its evidence: with 3-10 labelled decided cases that
    mostly agree, the normal interval (standard error near 0) held the truth in 0.31-0.73
    of draws; each share's interval is now at least Wilson's of its labels."""
    assert _release_coverage(decided, escalated, draws=300) >= 0.93


def test_release_pass_rate_says_when_labels_do_not_allow_it() -> None:
    assert release_pass_rate([1], [1], [1, 0], [], escalated_total=0)["estimate"] is None
    out = release_pass_rate([1, 0], [1, 0], [1], [], escalated_total=3)
    assert out["estimate"] is None and "escalated" in out["reason"]
    sampled = release_pass_rate([1, 0], [1, 0], [1], [1, 0], escalated_total=10)
    assert sampled["escalated"]["exact"] is False and not math.isnan(sampled["estimate"])


@pytest.mark.parametrize("seed", range(6))
def test_pooled_path_matches_the_cascade_it_describes(seed: int) -> None:
    """At every step m of the pooled path, the decided count and disagreements are those of
    `decide` with each rung's threshold at its own m most confident cases."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 120))
    conf = [np.round(rng.uniform(0.5, 1, n), 2) for _ in range(int(rng.integers(1, 4)))]
    conf[-1][rng.random(n) < 0.1] = np.nan  # some cases without a verdict at the last rung
    agrees = [rng.random(n) < c for c in conf]
    curve, _ = pooled_path(conf, agrees)
    for m, count, errors in zip(curve.thresholds, curve.decided, curve.disagreements, strict=True):
        thresholds = []
        for c in conf:
            ranks = np.array([np.sum(c >= x) if not np.isnan(x) else n + 1 for x in c])
            thresholds.append(float(np.min(c[ranks <= m])) if np.any(ranks <= m) else None)
        by = decide(conf, thresholds)
        wrong = sum(int(not agrees[j][i]) for i, j in enumerate(by) if j >= 0)
        assert (count, errors) == (int((by >= 0).sum()), wrong), m


def test_pooled_split_certifies_the_decided_cases_at_full_delta() -> None:
    rng = np.random.default_rng(11)
    n = 1500
    cheap = 0.5 + 0.5 * rng.beta(2, 1, n)
    strong = 0.5 + 0.5 * rng.beta(6, 1, n)
    conf, agrees = [cheap, strong], [rng.random(n) < cheap, rng.random(n) < strong]
    pooled = certify_cascade(conf, agrees, agreement=0.85, delta=0.1, split="pooled")
    assert pooled.certified
    assert np.array_equal(pooled.decided_by, decide(conf, [r.threshold for r in pooled.rungs]))
    bound = float(clopper_pearson_upper(pooled.disagreements, pooled.decided, delta=0.1))
    assert pooled.rungs[0].upper == pytest.approx(bound) and bound <= 0.15
    either = certify_cascade(conf, agrees, agreement=0.85, delta=0.1)  # the default
    halves = [
        certify_cascade(conf, agrees, agreement=0.85, delta=0.05, split=s)
        for s in ("pooled", "bonferroni")
    ]
    assert either.decided == max(h.decided for h in halves)
