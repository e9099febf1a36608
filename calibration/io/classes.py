"""Which classes a label file uses, in what order, and which one is the pass class."""

from __future__ import annotations

from collections.abc import Sequence

from calibration.io.labels import ABSTAINED, as_number

__all__ = ["POSITIVE_WORDS", "choose_positive", "order_labels", "pass_fail_classes"]

# Labels read as "the answer passes" when a two-class file does not say which is positive
# and names no rubric (another tool's file): the graded records of this tool take the pass
# label from their rubric instead (judge.app.pass_class), never from this list.
POSITIVE_WORDS = frozenset(
    [
        "pass",
        "passed",
        "yes",
        "true",
        "ok",
        "good",
        "correct",
        "acceptable",
        "faithful",
        "consistent",
        "supported",
        "relevant",
        "positive",
        "grounded",
        "safe",
        "match",
        "completed",
        "valid",
        "hit",
    ]
)


def choose_positive(order: Sequence[str], explicit: str | None = None) -> str:
    """The "pass" class of a two-class scale: ``explicit``; else the larger number; else the
    one label that reads as a pass (``consistent``, ``faithful``, ``yes``...); else the last."""
    if explicit is not None:
        return explicit
    if all(as_number(v) is not None for v in order):
        return max(order, key=lambda v: float(v))
    passes = [v for v in order if v.lower() in POSITIVE_WORDS]
    return passes[0] if len(passes) == 1 else order[-1]


def order_labels(
    values: Sequence[str],
    *,
    explicit: Sequence[str] | None = None,
    positive: str | None = None,
) -> list[str]:
    """Stated class order: ``explicit`` if given; numbers ascending; two classes with the
    pass class (``positive`` when it is one of them, else :func:`choose_positive`'s) last,
    as scikit-learn puts 1 after 0; otherwise alphabetical."""
    if explicit:
        return list(explicit)
    distinct = set(values)
    if all(as_number(v) is not None for v in distinct):
        return sorted(distinct, key=float)
    order = sorted(distinct)
    if len(order) == 2:
        positive = choose_positive(order, positive if positive in order else None)
        order = [v for v in order if v != positive] + [positive]
    return order


def pass_fail_classes(order: Sequence[str]) -> list[str] | None:
    """The two classes of a pass/fail scale, ``abstained`` aside (an abstention is an
    outcome of its own, never a pass or a fail); ``None`` when there are not two."""
    classes = [c for c in order if c != ABSTAINED]
    return classes if len(classes) == 2 else None
