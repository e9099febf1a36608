"""Hold out a test split of the labelled cases, stratified by the human label.

Everything chosen from the data (a fitted threshold) is chosen on the development split;
the figures that decide (readiness, gates) come from the test split, which nothing saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import train_test_split

from calibration.errors import CalibrationInputError

__all__ = ["Split", "split_cases"]


@dataclass(frozen=True)
class Split:
    """Indices of the development and test cases, and how they were drawn."""

    dev: list[int]
    test: list[int]
    test_fraction: float
    seed: int
    stratified: bool

    def describe(self) -> str:
        how = "stratified by human label" if self.stratified else "not stratified (scores)"
        return (
            f"dev {len(self.dev)} / test {len(self.test)} labelled cases "
            f"(test {self.test_fraction:g}, {how}, seed {self.seed})"
        )


def split_cases(strata: Sequence[Any] | None, n: int, *, test_fraction: float, seed: int) -> Split:
    """Split ``n`` cases into dev and test, each class of ``strata`` (the normalised human
    labels; ``None`` for continuous scores) in the same proportion on both sides, as
    ``sklearn.model_selection.train_test_split(stratify=...)`` draws them. Seeded.

    Raises :class:`CalibrationInputError` when a class has too few cases to be split.
    """
    if not 0 < test_fraction < 1:
        raise CalibrationInputError(f"--split test fraction must be in (0, 1): {test_fraction}")
    index = np.arange(n)
    try:
        dev, test = train_test_split(
            index,
            test_size=test_fraction,
            random_state=seed,
            stratify=None if strata is None else np.asarray(strata, dtype=object),
        )
    except ValueError as exc:
        raise CalibrationInputError(
            f"cannot split {n} labelled cases with test={test_fraction:g}: {exc}; label more "
            "cases or choose another fraction"
        ) from None
    return Split(
        sorted(dev.tolist()), sorted(test.tolist()), test_fraction, seed, strata is not None
    )
