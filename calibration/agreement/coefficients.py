"""Agreement beyond Cohen's kappa: Gwet's AC1, and when the two tell different stories.

Kappa's chance term comes from each rater's own class shares; when one class dominates
(or the two raters' shares differ wildly) it can swing far from the raw agreement, the
"kappa paradoxes" of Feinstein and Cicchetti. Gwet's AC1 takes chance from the mean
share of each class and stays close to the share of agreements the raters did not reach
by chance. Reporting both, and saying when they part, keeps a skewed data set from
misleading a release decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from calibration.agreement.metrics import confusion

__all__ = ["ac1_from_confusion", "ac1_from_confusions", "gwet_ac1", "prevalence_note"]

# |kappa - AC1| at or above this, or opposite signs, is worth a sentence.
STRONG_DISAGREEMENT = 0.2


def ac1_from_confusion(matrix: ArrayLike) -> float:
    """Gwet's AC1 from a two-rater confusion matrix; see :func:`gwet_ac1`."""
    m = np.asarray(matrix, dtype=float)
    n = m.sum()
    q = m.shape[0]
    if n == 0 or q < 2:
        return float("nan")
    p_a = float(np.trace(m)) / n
    share = (m.sum(axis=0) + m.sum(axis=1)) / (2 * n)
    p_e = float((share * (1 - share)).sum()) / (q - 1)
    if p_e >= 1:
        return float("nan")
    return (p_a - p_e) / (1 - p_e)


def ac1_from_confusions(tables: ArrayLike) -> np.ndarray:
    """:func:`ac1_from_confusion` of every table of a stack ``(R, q, q)`` at once (a
    bootstrap's resamples); ``nan`` where it is undefined."""
    m = np.asarray(tables, dtype=float)
    n = m.sum(axis=(1, 2))
    q = m.shape[1]
    if q < 2:
        return np.full(len(m), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_a = np.trace(m, axis1=1, axis2=2) / n
        share = (m.sum(axis=1) + m.sum(axis=2)) / (2 * n[:, None])
        p_e = (share * (1 - share)).sum(axis=1) / (q - 1)
        out = (p_a - p_e) / (1 - p_e)
    out[(n == 0) | ~(p_e < 1)] = np.nan
    return out


def gwet_ac1(
    y_human: ArrayLike, y_judge: ArrayLike, *, labels: Sequence[Any] | None = None
) -> float:
    """Gwet's first-order agreement coefficient (AC1) between two raters.

    Formula: ``AC1 = (p_a - p_e) / (1 - p_e)`` with ``p_a`` the observed agreement and
    ``p_e = Σ_k π_k (1 - π_k) / (q - 1)``, where ``π_k`` is the mean of the two raters'
    shares of class ``k`` and ``q`` the number of classes (those in ``labels``, or seen on
    either side). Read it like kappa (1 perfect, 0 chance, negative worse than chance); it
    is not dragged down by a dominant class the way kappa is. ``nan`` with no cases or one
    class.

    Reference: Gwet (2008), Br. J. Math. Stat. Psychol. 61(1); Gwet (2014), Handbook of
    Inter-Rater Reliability, 4th ed., ch. 4; irrCAC's ``CAC.gwet``.
    """
    return ac1_from_confusion(confusion(y_human, y_judge, labels=labels))


def prevalence_note(result: dict[str, Any]) -> str | None:
    """One sentence when kappa and AC1 differ in sign or by 0.2 or more, else ``None``.

    ``result`` is an analysis body with ``kappa``, ``ac1`` and, for two classes,
    ``binary`` pass rates and ``krippendorff_alpha``.
    """
    kappa, ac1 = result.get("kappa"), result.get("ac1")
    if kappa is None or ac1 is None or not np.isfinite(kappa) or not np.isfinite(ac1):
        return None
    opposite = kappa * ac1 < 0
    if not opposite and abs(kappa - ac1) < STRONG_DISAGREEMENT:
        return None
    how = "disagree in sign" if opposite else "differ strongly"
    alpha = result.get("krippendorff_alpha")
    shown = f"kappa {kappa:+.3f}, AC1 {ac1:+.3f}"
    if alpha is not None and np.isfinite(alpha):
        shown += f", Krippendorff's alpha {alpha:+.3f}"
    binary = result.get("binary")
    rates = ""
    if binary:
        rates = (
            f" (people pass {binary['human_pass_rate']:.0%}, the judge "
            f"{binary['judge_pass_rate']:.0%}; TPR {binary['tpr']:.2f}, TNR "
            f"{binary['tnr']:.2f})"
        )
    return (
        f"Kappa and Gwet's AC1 {how} ({shown}): the classes are used so unevenly{rates} "
        "that kappa alone misleads; read the per-class rates."
    )
