"""The certificate's guarantee by simulation against a known truth, in settings the method
was not tuned on (`benchmarks/certify.py` tuned it on Beta-shaped confidences): here the
judges' confidences take a few values only (ties, as verbalised or vote confidences do),
each with its own true agreement, so the true agreement of any decided set is exact.
Over many calibration draws, the share whose decided cases' true agreement is below A
must be at most delta, within simulation error (three standard errors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.certify import certify_cascade

# (confidence values, their probabilities, the true agreement at each)
VOTES = (
    np.array([0.6, 0.8, 1.0]),  # 3 of 5, 4 of 5, 5 of 5 samples agree
    np.array([0.25, 0.3, 0.45]),
    np.array([0.62, 0.8, 0.93]),
)
# near a ceiling: its surest tier agrees 0.975, the next 0.96 (the two together 0.9675), so
# at A 0.97 a certificate is right only on the top tier, and one reaching down is wrong
CEILING = (
    np.array([0.9, 0.99, 1.0]),
    np.array([0.5, 0.25, 0.25]),
    np.array([0.9, 0.96, 0.975]),
)
VERBAL = (
    np.array([0.5, 0.7, 0.8, 0.9, 0.95, 0.99]),
    np.array([0.05, 0.1, 0.15, 0.2, 0.25, 0.25]),
    np.array([0.55, 0.6, 0.75, 0.82, 0.9, 0.95]),  # says 0.99 where 95% is true
)


def _draw(rng, judge, n):
    values, probs, truth = judge
    level = rng.choice(len(values), size=n, p=probs)
    return values[level], rng.random(n) < truth[level]


def _true_agreement(judges, thresholds) -> float | None:
    """Exact, with the rungs' confidences independent: rung j decides the cases below
    every earlier threshold and at or above its own."""
    reach, decided, agreeing = 1.0, 0.0, 0.0
    for (values, probs, truth), t in zip(judges, thresholds, strict=True):
        if t is None:
            continue
        up = values >= t
        share = probs[up].sum()
        decided += reach * share
        agreeing += reach * (probs[up] * truth[up]).sum()
        reach *= 1 - share
    return None if decided == 0 else agreeing / decided


def _failure_share(judges, n, agreement, delta, draws, seed, split="either") -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    fails = covered = 0
    for _ in range(draws):
        sample = [_draw(rng, j, n) for j in judges]
        result = certify_cascade(
            [c for c, _ in sample], [a for _, a in sample], agreement=agreement, delta=delta,
            split=split,
        )  # fmt: skip
        truth = _true_agreement(judges, [r.threshold for r in result.rungs])
        fails += truth is not None and truth < agreement
        covered += truth is not None
    return fails / draws, covered / draws


@pytest.mark.parametrize(
    ("judges", "n", "agreement"),
    [((VERBAL,), 300, 0.9), ((VOTES, VERBAL), 400, 0.88), ((VERBAL,), 1000, 0.93)],
)
def test_true_agreement_falls_below_a_in_at_most_delta_of_draws(judges, n, agreement) -> None:
    delta, draws = 0.1, 300
    share, certified = _failure_share(judges, n, agreement, delta, draws, seed=n)
    assert certified > 0.2  # the test is about certificates actually given
    assert share <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)


@pytest.mark.slow
@pytest.mark.parametrize("n", [150, 2000])
def test_validity_over_many_draws(n: int) -> None:
    delta, draws = 0.1, 1000
    for judges, agreement in (((VERBAL,), 0.9), ((VOTES, VERBAL), 0.88), ((VERBAL,), 0.93)):
        share, _ = _failure_share(judges, n, agreement, delta, draws, seed=7 * n)
        assert share <= delta + 3 * math.sqrt(delta * (1 - delta) / draws), (n, agreement)


@pytest.mark.parametrize(
    ("judges", "agreement"), [((VOTES, VERBAL), 0.88), ((VERBAL, VERBAL), 0.9)]
)
def test_the_pooled_cascade_test_alone_is_valid_at_the_full_delta(judges, agreement) -> None:
    """`split="pooled"` spends the whole delta on the cascade's decided cases (no split
    over the rungs): still at most delta of draws below A."""
    delta, draws = 0.1, 300
    share, certified = _failure_share(judges, 400, agreement, delta, draws, 5, split="pooled")
    assert certified > 0.2
    assert share <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)


@pytest.mark.parametrize(("judges", "n"), [((CEILING,), 800), ((CEILING, CEILING), 1500)])
def test_near_a_ceiling_most_certificates_given_would_be_wrong_yet_few_are_given(judges, n) -> None:
    """A 0.97 on a judge whose surest tier barely clears it: the relay's later chains
    (a quarter and half of the cases) must not let a lucky draw certify the tier below."""
    delta, draws = 0.1, 300
    share, certified = _failure_share(judges, n, 0.97, delta, draws, seed=n + 1)
    assert certified > 0  # certificates are given, so the bound is tested
    assert share <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)
