"""Is the judge fit to gate a release? A verdict with its reasons in words.

The rule of thumb of the field, applied to the lower bound of the kappa interval (weighted
kappa when a weighting was asked for) so that a small lucky sample cannot pass:
below 0.4 ``not_ready``; 0.4 to 0.6 ``rough_signal``; above 0.6 ``gate_ready``.
A judge that misses most of one class is never ``gate_ready``, whatever its kappa, and
neither is one whose labels hold fewer of a class than the label plan needs for an
interval whose lower bound clears 0.6 at the observed kappa
(:mod:`calibration.decisions.evidence`); the reasons say how many more labels of which
class it needs.
"""

from __future__ import annotations

import math
from typing import Any

from calibration.decisions.evidence import shortfall

__all__ = ["NOT_READY", "ROUGH_SIGNAL", "GATE_READY", "assess_readiness"]

NOT_READY, ROUGH_SIGNAL, GATE_READY = "not_ready", "rough_signal", "gate_ready"
ROUGH_FROM, GATE_ABOVE = 0.4, 0.6
SMALL_SAMPLE = 50
_METHOD_NAMES = {"cohen_kappa": "Cohen's kappa", "fleiss_kappa": "Fleiss' kappa"}


def _band(value: float) -> str:
    if value < ROUGH_FROM:
        return NOT_READY
    return GATE_READY if value > GATE_ABOVE else ROUGH_SIGNAL


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def _kappa_reason(name: str, value: float, ci: Any, verdict: str) -> str:
    if ci is None:
        return f"{name} {value:.3f} (no interval computed: bootstrap off); judged on the value"
    if not all(_finite(b) for b in ci):
        return f"{name} {value:.3f} (no interval: too few varied resamples); judged on the value"
    meaning = {
        NOT_READY: f"below {ROUGH_FROM}: not ready to gate a release",
        ROUGH_SIGNAL: f"between {ROUGH_FROM} and {GATE_ABOVE}: a rough signal, not a gate",
        GATE_READY: f"above {GATE_ABOVE}: usable as an automated gate",
    }[verdict]
    return f"{name} {value:.3f}, 95% interval [{ci[0]:.3f}, {ci[1]:.3f}]; lower bound {meaning}"


def _missed_classes(result: dict[str, Any], kappa: float) -> list[str]:
    reasons = []
    for label, scores in (result.get("per_class") or {}).items():
        recall, support = scores["recall"], scores["support"]
        if support and _finite(recall) and recall < 0.5:
            lead = "agreement above chance but" if kappa > 0 else "agreement no better than chance:"
            hits = round(recall * support)
            reasons.append(
                f"{lead} the judge misses most of class {label!r} "
                f"(recall {recall:.2f}: {hits} of {support} found)"
            )
    return reasons


def _context(result: dict[str, Any], n: int) -> list[str]:
    notes = []
    if n < SMALL_SAMPLE:
        notes.append(f"only {n} labelled cases: the interval is wide; label more (see --plan)")
    inter = result.get("inter_annotator")
    if inter and _finite(inter.get("ceiling")):
        notes.append(_ceiling_sentence(inter))
    threshold = result.get("threshold")
    if threshold and threshold.get("fitted") and threshold.get("in_sample"):
        notes.append(
            f"threshold {threshold['value']:g} was fitted on these labels (in-sample): "
            "expect lower agreement on new data (hold out a test split: --split test=0.3)"
        )
    return notes


def _ceiling_sentence(inter: dict[str, Any]) -> str:
    """The ceiling on the judge's own scale and weights: one annotator against another."""
    weights = inter.get("ceiling_weights")
    name = _METHOD_NAMES[inter["method"]]
    if weights:
        name = f"{weights} weighted {name}"
    items = inter.get("n_multiply_rated")
    over = f", {items} items with two or more ratings" if items is not None else ""
    return (
        f"people agree with each other at {name} {inter['ceiling']:.3f} (one annotator "
        f"against another{over}): the ceiling a judge can be held to; the judge is compared "
        f"with one label per case ({inter.get('consolidation', 'consolidated')})"
    )


def assess_readiness(result: dict[str, Any]) -> tuple[str, list[str]]:
    """``(readiness, reasons)`` for a calibration result (see the module docstring)."""
    weighted = bool(result.get("weights"))
    key = "weighted_kappa" if weighted else "kappa"
    name = f"{result['weights']} weighted kappa" if weighted else "kappa"
    raw = result.get(key)
    context = _context(result, result.get("n", 0))
    if raw is None or not _finite(raw):
        reason = result.get("kappa_undefined_reason") or "kappa undefined"
        return NOT_READY, [reason, *context]
    value = float(raw)
    ci = result.get(f"{key}_ci95")
    lower = ci[0] if ci is not None and _finite(ci[0]) else value
    verdict = _band(lower)
    reasons = [_kappa_reason(name, value, ci, verdict)]
    missed = _missed_classes(result, value)
    if missed and verdict == GATE_READY:
        verdict = ROUGH_SIGNAL
        missed.append("not a gate while a class is mostly missed")
    short = _short_of_evidence(result, value) if value > GATE_ABOVE else None
    if short is not None and verdict == GATE_READY:
        verdict = ROUGH_SIGNAL
        missed.append(f"{short}; not a gate until then")
    elif short is not None:  # the estimate clears the bar, the labels cannot yet say so
        missed.append(short)
    return verdict, [*reasons, *missed, *context]


def _short_of_evidence(result: dict[str, Any], kappa: float) -> str | None:
    """Why the labels are too few to back "above 0.6"
    (:func:`calibration.decisions.evidence.shortfall` on the confusion matrix), or ``None``
    when they are enough."""
    matrix = (result.get("confusion_matrix") or {}).get("matrix")
    order = result.get("labels")
    if not matrix or not order:
        return None
    human, judge = [], []
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            human += [order[i]] * count
            judge += [order[j]] * count
    return shortfall(human, judge, order, kappa, GATE_ABOVE)
