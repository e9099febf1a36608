"""One test for a whole cascade, at the full ``delta``: every rung's threshold moves
together along one path fixed before the labels are read, and the test bounds the
disagreement on all the cases the cascade decides, which is what the user reads.

The path. Rung ``j`` ranks the labelled cases by its own confidence: ``r_j(i)`` is the
number of labelled cases whose rung-``j`` confidence is at least case ``i``'s (ties share
a rank; no verdict: never). At step ``m`` every rung takes the threshold of its own ``m``
most confident cases, ``t_j(m)`` = the lowest confidence among cases with
``r_j <= m``, so a case is decided by the first rung with ``r_j(i) <= m``. The ranks use
confidences only, never labels, so the order of the steps is fixed before any label is
read (a quantile path: each rung's threshold at the same quantile of its own confidences).

The test. At step ``m`` the cascade decides ``n(m)`` labelled cases with ``k(m)``
disagreements; ``H_m: R(m) > 1 - A``, ``R(m)`` the true disagreement on the cases the
cascade decides with thresholds ``t(m)``. The steps are tested in order of ``m`` with the
relay of :mod:`calibration.certify.threshold` (two joined fixed sequences,
``SPLIT_CHAINS``, Bretz et al. 2009), each p-value the exact binomial one
(Clopper-Pearson), so the chance that the chosen thresholds' decided cases truly agree
with people less than ``A`` is at most ``delta``. No split of ``delta`` over the rungs is needed: the one statement tested is the
cascade's own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from calibration.certify.threshold import SPLIT_CHAINS, Curve, RungThreshold, _relay

__all__ = ["pooled_path", "pooled_thresholds"]


def _ranks(conf: np.ndarray) -> np.ndarray:
    """``r(i)``: how many cases have a confidence at least case ``i``'s (``nan``: never,
    ranked past every case)."""
    valid = ~np.isnan(conf)
    ordered = np.sort(conf[valid])
    out = np.full(len(conf), len(conf) + 1)
    out[valid] = len(ordered) - np.searchsorted(ordered, conf[valid], side="left")
    return out


def pooled_path(
    confidences: Sequence[ArrayLike], agrees: Sequence[ArrayLike]
) -> tuple[Curve, list[np.ndarray]]:
    """The path's steps ``m`` (ascending) with the cascade's decided count ``n(m)`` and
    disagreements ``k(m)`` at each, as a :class:`Curve` whose ``thresholds`` hold ``m``;
    and each rung's ranks."""
    ranks = [_ranks(np.asarray(c, dtype=float)) for c in confidences]
    wrong = [~np.asarray(a, dtype=bool) for a in agrees]
    n, rungs = len(ranks[0]), len(ranks)
    events = sorted(
        (int(r[i]), j, i) for j, r in enumerate(ranks) for i in range(n) if r[i] <= n
    )  # a case switches to rung j once m reaches r_j(i), if no earlier rung has it
    current = [rungs] * n
    steps, decided, errors = [], [], []
    count = k = 0
    for e, (m, j, i) in enumerate(events):
        if j < current[i]:
            if current[i] == rungs:
                count += 1
            else:
                k -= int(wrong[current[i]][i])
            current[i] = j
            k += int(wrong[j][i])
        if e + 1 == len(events) or events[e + 1][0] != m:
            steps.append(m)
            decided.append(count)
            errors.append(k)
    curve = Curve(np.asarray(steps, dtype=float), np.asarray(decided), np.asarray(errors))
    return curve, ranks


def pooled_thresholds(
    confidences: Sequence[ArrayLike],
    agrees: Sequence[ArrayLike],
    *,
    agreement: float,
    delta: float,
    min_decided: int = 30,
) -> tuple[list[float | None], RungThreshold]:
    """Each rung's threshold at the step the test certifies (``None`` everywhere when it
    certifies none), and the test's result on the pooled decided cases."""
    conf = [np.asarray(c, dtype=float) for c in confidences]
    n = len(conf[0]) if conf else 0
    if n == 0:
        return [None] * len(conf), RungThreshold(None, 0, 0, 0, None, 0, pooled_path([[]], [[]])[0])
    curve, ranks = pooled_path(conf, agrees)
    test = _relay(curve, agreement, delta, min_decided, n, SPLIT_CHAINS)
    if test.threshold is None:
        return [None] * len(conf), test
    m = int(test.threshold)
    thresholds: list[float | None] = []
    for c, r in zip(conf, ranks, strict=True):
        mine = r <= m
        thresholds.append(float(np.min(c[mine])) if mine.any() else None)
    return thresholds, test
