"""Intervals of `judge calibrate --group-field F` that know the pairs come in groups (a
dialogue's turns): kappa, AC1, weighted kappa and the two-class rates, each widened to
hold the cluster bootstrap's interval, which resamples whole groups.

The intervals over cases take the pairs as independent. A dialogue's turns are not: a
judge that misreads one turn of a dialogue tends to misread the next, so the turns of one
dialogue carry less evidence than as many independent pairs, and the intervals over
cases were too narrow (kappa at 30 and 100 dialogues: coverage 0.81-0.83, every miss on
the high side). Each figure's interval becomes the hull of its interval over cases and
the percentile interval of the cluster bootstrap (Davison and Hinkley (1997), sec. 3.8;
Field and Welsh (2007)): never narrower than either. Groups are assumed independent of
each other; ``benchmarks/cluster_intervals.md`` measures the coverage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from calibration.agreement.coefficients import ac1_from_confusion
from calibration.agreement.metrics import kappa_from_confusion, label_values
from calibration.inference.clusters import cluster_table_ci

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
    widened = []
    for name, interval in found.items():
        holder, key = (out["binary"], name[7:]) if name.startswith("binary.") else (out, name)
        current = holder.get(f"{key}_ci95")
        if interval is None or not current:
            continue
        holder[f"{key}_ci95"] = (min(current[0], interval[0]), max(current[1], interval[1]))
        if f"{key}_ci95_method" in holder:
            holder[f"{key}_ci95_method"] = f"{holder[f'{key}_ci95_method']}; {GROUPED_METHOD}"
        widened.append(key)
    out["grouped_intervals"] = {
        "groups": len(set(map(str, groups))),
        "resamples": n_resamples,
        "widened": widened,
        "method": "cluster bootstrap: each resample draws whole groups with replacement; "
        "each interval is the hull of its interval over cases and the cluster bootstrap's",
    }
