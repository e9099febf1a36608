"""Pass/fail view of two-class labels: error rates with intervals and the corrected pass rate.

The labelled cases (judge and human both gave pass or fail) measure the judge's error
rates; the judge's pass rate is taken over every case it judged pass or fail, the cases
no person labelled included, and corrected for those error rates (:mod:`calibration.estimates.rates`).
Cases a person marked ``abstained`` are not pass/fail cases and are left out of both; so
are cases the judge marked ``abstained``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from calibration.estimates.rates import corrected_pass_rate
from calibration.inference.intervals import wilson_interval
from calibration.io.classes import choose_positive, pass_fail_classes

__all__ = ["binary_rates"]


def _rate(successes: int, n: int) -> tuple[float, tuple[float, float] | None]:
    return (successes / n, wilson_interval(successes, n)) if n else (float("nan"), None)


def binary_rates(
    human: Sequence[str],
    judge: Sequence[str],
    *,
    order: Sequence[str],
    judge_unlabelled: Sequence[str] = (),
    positive_label: str | None = None,
) -> dict[str, Any] | None:
    """Pass/fail statistics of normalised labels, or ``None`` without two pass/fail classes.

    ``human`` and ``judge`` are the labelled pairs; ``judge_unlabelled`` the judge's labels
    of the cases no person labelled. TPR (sensitivity) and TNR (specificity) come with
    Wilson intervals; ``judged`` is the judge's pass rate over all judged cases, and
    ``corrected_pass_rate`` its Rogan-Gladen correction with the two-phase score interval.
    """
    classes = pass_fail_classes(order)
    if classes is None:
        return None
    positive = choose_positive(classes, positive_label)
    negative = classes[0] if classes[1] == positive else classes[1]
    pairs = [(h, j) for h, j in zip(human, judge, strict=True) if h in classes and j in classes]
    tp = sum(h == positive and j == positive for h, j in pairs)
    fn = sum(h == positive and j == negative for h, j in pairs)
    fp = sum(h == negative and j == positive for h, j in pairs)
    tn = len(pairs) - tp - fn - fp
    extra = [v for v in judge_unlabelled if v in classes]
    n_judged = len(pairs) + len(extra)
    judged_positive = tp + fp + sum(v == positive for v in extra)
    corrected = corrected_pass_rate(judged_positive, n_judged, tp=tp, fn=fn, tn=tn, fp=fp)
    tpr, tpr_ci = _rate(tp, tp + fn)
    tnr, tnr_ci = _rate(tn, tn + fp)
    labelled_rate, labelled_ci = _rate(tp + fp, len(pairs))
    human_rate, human_ci = _rate(tp + fn, len(pairs))
    judged_rate, judged_ci = _rate(judged_positive, n_judged)
    return {
        "positive_label": positive,
        "negative_label": negative,
        "counts": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
        "left_out": len(human) - len(pairs),
        "tpr": tpr,
        "tpr_ci95": tpr_ci,
        "tnr": tnr,
        "tnr_ci95": tnr_ci,
        "judge_pass_rate": labelled_rate,
        "judge_pass_rate_ci95": labelled_ci,
        "human_pass_rate": human_rate,
        "human_pass_rate_ci95": human_ci,
        "judged": {
            "n": n_judged,
            "passed": judged_positive,
            "unlabelled": len(extra),
            "pass_rate": judged_rate,
            "pass_rate_ci95": judged_ci,
        },
        "corrected_pass_rate": corrected.rate,
        "corrected_pass_rate_ci95": corrected.ci95,
        "corrected_pass_rate_reason": corrected.reason,
        "corrected_pass_rate_method": (
            "Rogan-Gladen: judge pass rate over all judged cases, sensitivity and "
            "specificity from the labelled ones; two-phase score interval"
        ),
    }
