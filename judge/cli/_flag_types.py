"""Checked flag values for ``judge calibrate``: a bad value is a usage error (exit 2) with
the flag named, before any file is read, never a traceback later."""

from __future__ import annotations

import argparse
import math

__all__ = [
    "finite_number",
    "kappa_value",
    "non_negative_int",
    "rate",
    "resamples",
    "test_split",
    "width",
]


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def non_negative_int(text: str) -> int:
    """0, 1, 2, ... (``--bootstrap 0`` means no bootstrap intervals)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; use 0 or more")
    return value


def resamples(text: str) -> int:
    """0 (no bootstrap intervals) to MAX_RESAMPLES (calibration.inference.intervals)."""
    from judge.app.calibrate import MAX_RESAMPLES  # the cli reads no calibration itself

    value = non_negative_int(text)
    if value > MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"{value} resamples: at most {MAX_RESAMPLES:,}")
    return value


def finite_number(text: str) -> float:
    return _number(text)


def rate(text: str) -> float:
    """A pass rate strictly between 0 and 1."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value:g} is not strictly between 0 and 1")
    return value


def width(text: str) -> float:
    """A kappa interval width, strictly between 0 and 2."""
    value = _number(text)
    if not 0 < value < 2:
        raise argparse.ArgumentTypeError(f"{value:g} is not strictly between 0 and 2")
    return value


def kappa_value(text: str) -> float:
    value = _number(text)
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value:g} is not a kappa between -1 and 1")
    return value


def test_split(text: str) -> float:
    """``test=F``: hold out a share F (strictly between 0 and 1) of the labelled cases."""
    name, _, share = text.partition("=")
    if name.strip() != "test" or not share:
        raise argparse.ArgumentTypeError(f"{text!r}: expected test=F, e.g. test=0.3")
    return rate(share)
