"""Enough labels for a claim? The labels per class a kappa claim needs, from the label plan.

A verdict such as ``gate_ready`` ("kappa's lower bound is above 0.6") or ``judge gate
--min-kappa K`` claims a precision: an interval around the observed kappa whose lower
bound clears the bar, i.e. of width ``W = 2(κ̂ - bar)``. :func:`calibration.decisions.plan.plan_sample_size`
says how many labelled cases give an interval that narrow at the observed kappa and pass
rates (Fleiss, Cohen and Everitt 1969, floored by the exact interval so that a kappa near
1 never plans 2 labels, and by the one-sided exact interval ``[low, 1]`` of width
``κ̂ - bar`` near kappa 1); of those, a share ``H`` (the human pass rate) are passes and
``1 - H`` fails. A claim is backed when the labels hold at least that many of each class;
otherwise the verdict is not given and the shortfall is said in labels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from calibration.decisions.plan import exact_floor, plan_sample_size
from calibration.io.classes import choose_positive

__all__ = ["Evidence", "required_labels", "shortfall"]

MIN_RATE = 0.01  # a plan needs both rates strictly inside (0, 1)


@dataclass(frozen=True)
class Evidence:
    """What a claim needs and what the labels have, per class."""

    bar: float
    needed: int  # labelled cases in all
    needed_per_class: dict[str, int]
    have_per_class: dict[str, int]

    @property
    def short_per_class(self) -> dict[str, int]:
        return {
            c: max(0, need - self.have_per_class.get(c, 0))
            for c, need in self.needed_per_class.items()
        }

    @property
    def enough(self) -> bool:
        return not any(self.short_per_class.values())

    def describe(self) -> str:
        """One sentence: backed, or how many more labels of which class it needs."""
        have = sum(self.have_per_class.values())
        need = ", ".join(f"{n} {c!r}" for c, n in self.needed_per_class.items())
        if self.enough:
            return f"{have} labels back a lower bound above {self.bar:g} (the plan needs {need})"
        short = ", ".join(f"{n} more {c!r}" for c, n in self.short_per_class.items() if n)
        return (
            f"too few labels to claim kappa above {self.bar:g}: the plan asks for "
            f"{self.needed} ({need}), these {have} are short by {short} (judge calibrate --plan)"
        )


def _clamp(rate: float) -> float:
    return min(1 - MIN_RATE, max(MIN_RATE, rate))


def required_labels(
    kappa: float, counts: Mapping[str, int], *, bar: float, judge_passes: int, positive: str
) -> Evidence | None:
    """The labels per class a claim "kappa's lower bound is above ``bar``" needs, at the
    observed ``kappa``; ``counts``: labelled cases per human class (two classes),
    ``judge_passes``: how many of them the judge passed; ``positive``: the pass class.
    ``None`` when ``kappa <= bar`` (no sample size backs a claim the estimate misses) or
    when the labels are not two classes."""
    if len(counts) != 2 or positive not in counts or not math.isfinite(kappa) or kappa <= bar:
        return None
    n = sum(counts.values())
    human_rate = _clamp(counts[positive] / n)
    judge_rate = _clamp(judge_passes / n)
    width = min(1.99, 2 * (kappa - bar))
    try:
        plan = plan_sample_size(
            min(kappa, 0.999), width, human_rate=human_rate, judge_rate=judge_rate
        )
    except ValueError:  # the kappa is impossible at the clamped rates: plan at shared rates
        plan = plan_sample_size(min(kappa, 0.999), width, prevalence=human_rate)
    # Near kappa 1 the interval is one-sided, [low, 1]: its lower bound clears the bar
    # only when the whole width is under kappa - bar (the exact floor at that width).
    chance = human_rate * judge_rate + (1 - human_rate) * (1 - judge_rate)
    needed = max(plan.n, exact_floor(kappa - bar, chance))
    per_class = {
        c: max(1, math.ceil(needed * (human_rate if c == positive else 1 - human_rate)))
        for c in counts
    }
    return Evidence(bar, needed, per_class, dict(counts))


def shortfall(
    human: Sequence[str], judge: Sequence[str], order: Sequence[str], kappa: float, bar: float
) -> str | None:
    """Why the labelled pairs are too few to claim kappa above ``bar``, or ``None`` when
    they are enough (or the claim fails on the estimate anyway). Two classes: per class,
    :func:`required_labels`; more: in all, the plan's exact floor at the observed chance
    agreement (:func:`calibration.decisions.plan.exact_floor`)."""
    if not math.isfinite(kappa) or kappa <= bar or not human:
        return None
    if len(order) == 2:
        positive = choose_positive(list(order))
        counts = {c: sum(h == c for h in human) for c in order}
        passes = sum(j == positive for j in judge)
        evidence = required_labels(kappa, counts, bar=bar, judge_passes=passes, positive=positive)
        return None if evidence is None or evidence.enough else evidence.describe()
    n = len(human)
    chance = sum((sum(h == c for h in human) / n) * (sum(j == c for j in judge) / n) for c in order)
    floor = exact_floor(kappa - bar, chance)
    if n >= floor:
        return None
    return (
        f"too few labels to claim kappa above {bar:g}: even perfect agreement needs "
        f"{floor} for an exact interval that narrow, these are {n} ({floor - n} more)"
    )
