"""Intervals of `judge calibrate --group-field F` that know the pairs come in groups (a
dialogue's turns): kappa, AC1, weighted kappa and the two-class rates, each widened to
hold the cluster bootstrap's interval, which resamples whole groups.

The intervals over cases take the pairs as independent. A dialogue's turns are not: a
judge that misreads one turn of a dialogue tends to misread the next, so the turns of one
dialogue carry less evidence than as many independent pairs, and the intervals over
cases were too narrow (kappa at 30 and 100 dialogues: coverage 0.81-0.83, every miss on
the high side). Each figure's interval becomes the hull of its interval over cases and
the percentile interval of the cluster bootstrap (Davison and Hinkley (1997), sec. 3.8;
Field and Welsh (2007)), its reach from the estimate scaled by ``sqrt(G/(G-1)) ·
t(G-1)/z`` for the few groups (at 30 dialogues the plain percentile interval covered
0.92): never narrower than either. Groups are assumed independent of
each other; ``benchmarks/cluster_intervals.md`` measures the coverage.

References: Davison and Hinkley (1997), Bootstrap Methods and their Application, sec. 3.8;
Field and Welsh (2007), J. R. Stat. Soc. B 69(3); Cameron, Gelbach and Miller (2008), Rev.
Econ. Stat. 90(3) (few clusters).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from calibration.agreement.coefficients import ac1_from_confusion
from calibration.agreement.metrics import kappa_from_confusion, label_values
from calibration.inference.clusters import cluster_table_ci
from calibration.inference.intervals import normal_quantile, t_quantile

__all__ = ["GROUPED_METHOD", "widen_for_groups"]

GROUPED_METHOD = "widened to hold the cluster bootstrap's percentile interval (groups resampled)"


def _share(numerator: Callable[[np.ndarray], float], denominator: Callable[[np.ndarray], float]):
    def of_table(table: np.ndarray) -> float:
        below = denominator(table)
        return numerator(table) / below if below > 0 else float("nan")

    return of_table


def _statistics(out: dict[str, Any], order: list[str]) -> dict[str, Callable]:
    """The figures of ``out`` that have an interval, as functions of the table."""
    found: dict[str, Callable] = {}
    if out.get("kappa_ci95"):
        found["kappa"] = kappa_from_confusion
    if out.get("ac1_ci95"):
        found["ac1"] = ac1_from_confusion
    if out.get("weighted_kappa_ci95"):
        found["weighted_kappa"] = partial(
            kappa_from_confusion, weights=out["weights"], values=label_values(order)
        )
    binary = out.get("binary") or {}
    if binary:
        p = order.index(binary["positive_label"])
        q = 1 - p
        found["binary.tpr"] = _share(lambda t: t[p, p], lambda t: t[p].sum())
        found["binary.tnr"] = _share(lambda t: t[q, q], lambda t: t[q].sum())
        found["binary.human_pass_rate"] = _share(lambda t: t[p].sum(), lambda t: t.sum())
        found["binary.judge_pass_rate"] = _share(lambda t: t[:, p].sum(), lambda t: t.sum())
    return found


def _few_groups(interval, estimate: float, groups: int, *, rate: bool) -> tuple[float, float]:
    """The percentile interval's reach from the estimate scaled by
    ``sqrt(G/(G-1)) · t(G-1)/z``: the bootstrap's variance over ``G`` groups is short by
    ``(G-1)/G``, and a spread estimated from ``G`` groups calls for Student's quantile
    (Cameron, Gelbach and Miller (2008)); clipped to the figure's range."""
    if groups < 2:
        return interval
    factor = math.sqrt(groups / (groups - 1)) * t_quantile(0.95, groups - 1) / normal_quantile()
    low = estimate - factor * (estimate - interval[0])
    high = estimate + factor * (interval[1] - estimate)
    floor = 0.0 if rate else -1.0
    return (max(floor, low), min(1.0, high))


def widen_for_groups(
    out: dict[str, Any],
    human: np.ndarray,
    judge: np.ndarray,
    order: list[str],
    groups: Sequence[Any],
    *,
    n_resamples: int,
    seed: int,
    unlabelled: int = 0,
) -> None:
    """Widen each interval of ``out`` (the categorical figures of :func:`analyse`) to hold
    its cluster bootstrap interval, and say so in its ``_method`` and in
    ``out["grouped_intervals"]``. The judge's pass rate, when it counts cases no person
    labelled (``unlabelled``), is left as it is."""
    statistics = _statistics(out, order)
    if unlabelled:
        statistics.pop("binary.judge_pass_rate", None)
    found = cluster_table_ci(human, judge, len(order), [str(g) for g in groups], statistics,
                             n_resamples=n_resamples, seed=seed)  # fmt: skip
    count = len(set(map(str, groups)))
    widened = []
    for name, interval in found.items():
        holder, key = (out["binary"], name[7:]) if name.startswith("binary.") else (out, name)
        current = holder.get(f"{key}_ci95")
        if interval is None or not current or holder.get(key) is None:
            continue
        low, high = _few_groups(
            interval, float(holder[key]), count, rate=name.startswith("binary.")
        )
        holder[f"{key}_ci95"] = (min(current[0], low), max(current[1], high))
        if f"{key}_ci95_method" in holder:
            holder[f"{key}_ci95_method"] = f"{holder[f'{key}_ci95_method']}; {GROUPED_METHOD}"
        widened.append(key)
    out["grouped_intervals"] = {
        "groups": count,
        "resamples": n_resamples,
        "widened": widened,
        "method": "cluster bootstrap: each resample draws whole groups with replacement; "
        "each interval is the hull of its interval over cases and the cluster bootstrap's",
    }
