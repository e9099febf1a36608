"""Two judge configurations on one human-labelled anchor set: is the candidate worse?

A new rubric version or a new model (the candidate) is graded on the same labelled cases
as the configuration in use (the baseline). The comparison is paired, case by case:

- each judge's Cohen's kappa with a percentile bootstrap interval, and the bootstrap
  interval of the difference computed on the **same** resampled cases for both (so what
  the two share, the cases' difficulty, cancels);
- McNemar's exact test on per-case correctness: only the cases where exactly one judge
  agrees with people count; under "equally good" each such case is a fair coin;
- the share of cases whose verdict flipped between the two;
- a verdict: significantly worse, significantly better, or no significant difference.

Pure functions on labels already spelled one way; :mod:`calibration.compare.anchor_inputs` reads
the files and :mod:`judge.cli._gate` is the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration.agreement.metrics import kappa_from_confusion
from calibration.agreement.small_sample import (
    SMALL_SAMPLE,
    cohen_chance,
    fce_kappa_interval,
    is_degenerate,
    kappa_type_interval,
)
from calibration.inference.intervals import (
    DEFAULT_RESAMPLES,
    binomial_test_p,
    bootstrap_indices_ci,
    wilson_interval,
)

__all__ = ["compare_judges", "mcnemar_exact"]


def mcnemar_exact(baseline_only: int, candidate_only: int) -> float:
    """Exact two-sided McNemar p-value from the two discordant counts.

    ``baseline_only``: cases only the baseline got right; ``candidate_only``: cases only
    the candidate got right. Under the null hypothesis that both judges are right equally
    often, each of the ``d = baseline_only + candidate_only`` discordant cases is a fair
    coin, so the p-value is the two-sided binomial test of ``candidate_only`` in ``d``
    trials at 1/2: ``min(1, 2·P(X <= min(b, c)))``. ``1.0`` when there is no discordant
    case (nothing tells the judges apart). Small values say the two judges differ in
    accuracy on cases like these; which way is in the counts.

    Reference: McNemar (1947), Psychometrika 12(2); Fagerland, Lydersen and Laake (2013),
    BMC Med. Res. Methodol. 13:91; statsmodels' ``mcnemar(table, exact=True)``, which the
    tests check it against.
    """
    discordant = baseline_only + candidate_only
    if discordant == 0:
        return 1.0
    return binomial_test_p(candidate_only, discordant, 0.5)


def _kappa(h: np.ndarray, j: np.ndarray, k: int) -> float:
    return kappa_from_confusion(np.bincount(h * k + j, minlength=k * k).reshape(k, k))


def _codes(values: Sequence[str], order: Sequence[str]) -> np.ndarray:
    index = {label: i for i, label in enumerate(order)}
    return np.array([index[v] for v in values], dtype=int)


def _judge_figures(h, j, k, n_bootstrap: int, seed: int) -> dict[str, Any]:
    correct = int((h == j).sum())
    kappa = _kappa(h, j, k)
    ci = reason = None
    if n_bootstrap and np.isfinite(kappa):
        boot = bootstrap_indices_ci(
            len(h), lambda idx: _kappa(h[idx], j[idx], k), n_resamples=n_bootstrap, seed=seed
        )
        # A degenerate bootstrap ([1, 1] from 5 agreeing cases) is no evidence: the exact
        # agreement interval stands in (calibration.agreement.small_sample).
        matrix = np.bincount(h * k + j, minlength=k * k).reshape(k, k)
        chance = cohen_chance(matrix, 1 - np.eye(k))
        interval = kappa_type_interval(
            boot, matrix, chance, large_sample=fce_kappa_interval(matrix)
        )
        ci, reason = interval.ci, interval.reason
    return {
        "kappa": kappa,
        "kappa_ci95": ci,
        "kappa_ci95_reason": reason,
        "accuracy": correct / len(h),
        "accuracy_ci95": wilson_interval(correct, len(h)),
        "correct": correct,
    }


def _difference(
    h, b, c, k, n_bootstrap: int, seed: int, each: tuple[Any, Any]
) -> tuple[tuple[float, float] | None, str | None]:
    """Paired percentile bootstrap of kappa(candidate) - kappa(baseline), and why it was
    replaced when it was.

    Where it is degenerate (every resample gave one difference, as with 5 cases each judge
    gets all right or all wrong, or most were undefined) while the two judges differ on
    some case, it is replaced by ``[low_c - high_b, high_c - low_b]`` from the two judges'
    own intervals (``each``: baseline's, candidate's), clipped to [-2, 2]: wide, as few
    cases are, never a point. Two judges that agree on every case differ by exactly 0."""
    if not n_bootstrap:
        return None, None

    def statistic(idx: np.ndarray) -> float:
        return _kappa(h[idx], c[idx], k) - _kappa(h[idx], b[idx], k)

    boot = bootstrap_indices_ci(len(h), statistic, n_resamples=n_bootstrap, seed=seed)
    if not is_degenerate(boot) or bool((b == c).all()):
        return boot, None
    base, cand = each
    if base is None or cand is None:
        return None, "no interval: a judge's kappa has none"
    low, high = max(-2.0, cand[0] - base[1]), min(2.0, cand[1] - base[0])
    return (low, high), (
        "every bootstrap resample gave the same difference: the interval is the two "
        "judges' own intervals combined (candidate low - baseline high, candidate high - "
        "baseline low)"
    )


def _verdict(difference: float, ci: Any, p: float, worse: bool, better: bool, alpha: float, n: int):
    if n < SMALL_SAMPLE:  # a bootstrap of so few cases is no test: McNemar's exact one is
        ci = None
    below = ci is not None and np.isfinite(ci[1]) and ci[1] < 0
    above = ci is not None and np.isfinite(ci[0]) and ci[0] > 0
    if below or (p < alpha and worse):
        return "worse"
    if above or (p < alpha and better):
        return "better"
    return "no_difference"


def compare_judges(
    ids: Sequence[str],
    human: Sequence[str],
    baseline: Sequence[str],
    candidate: Sequence[str],
    *,
    labels: Sequence[str],
    n_bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Paired comparison of two judges' labels of the same cases against human labels.

    ``labels`` is the class order (every label on every side must be in it). The three
    bootstrap intervals (each kappa and the difference) use the same seed, hence the same
    resampled cases. ``verdict`` is ``worse`` when the difference's interval lies wholly
    below 0 or McNemar's p is under ``alpha`` with the candidate right less often,
    ``better`` in the mirror case, else ``no_difference``. ``n_bootstrap = 0``: no
    intervals, the verdict rests on McNemar alone; so it does under 30 cases, where a
    bootstrap of the cases cannot reach what it has not seen (5 cases can give
    ``[-1, -1]``) and is no test. Each judge's kappa interval is the one
    ``judge calibrate`` reports (:func:`calibration.agreement.small_sample.kappa_type_interval`).
    """
    if not len(ids) == len(human) == len(baseline) == len(candidate):
        raise ValueError("ids, human, baseline and candidate must have one entry per case")
    if not ids:
        raise ValueError("no case to compare")
    h, b, c = (_codes(v, labels) for v in (human, baseline, candidate))
    k = len(labels)
    base = _judge_figures(h, b, k, n_bootstrap, seed)
    cand = _judge_figures(h, c, k, n_bootstrap, seed)
    baseline_only = int(((b == h) & (c != h)).sum())
    candidate_only = int(((c == h) & (b != h)).sum())
    p = mcnemar_exact(baseline_only, candidate_only)
    difference = cand["kappa"] - base["kappa"]
    ci, ci_reason = _difference(
        h, b, c, k, n_bootstrap, seed, (base["kappa_ci95"], cand["kappa_ci95"])
    )
    flipped = [i for i, x, y in zip(ids, b, c, strict=True) if x != y]
    return {
        "n": len(ids),
        "labels": list(labels),
        "baseline": base,
        "candidate": cand,
        "difference": {
            "kappa": difference,
            "kappa_ci95": ci,
            "kappa_ci95_reason": ci_reason,
            "accuracy": cand["accuracy"] - base["accuracy"],
        },
        "mcnemar": {
            "baseline_only_correct": baseline_only,
            "candidate_only_correct": candidate_only,
            "p_value": p,
            "alpha": alpha,
            "method": "exact (two-sided binomial test on the discordant cases)",
        },
        "flips": {"n": len(flipped), "rate": len(flipped) / len(ids), "ids": flipped},
        "verdict": _verdict(
            difference,
            ci,
            p,
            baseline_only > candidate_only,
            candidate_only > baseline_only,
            alpha,
            len(ids),
        ),
        "verdict_basis": "McNemar's exact test alone (under 30 cases: the bootstrap "
        "interval is shown, not tested)"
        if len(ids) < SMALL_SAMPLE
        else "the paired bootstrap interval and McNemar's exact test",
        "bootstrap": {"resamples": n_bootstrap, "seed": seed, "paired": True},
    }
