"""Prediction-powered estimates of a mean (a pass rate is the mean of 0/1 verdicts).

A judge grades every case; people label a few. The judge-only mean is precise but biased
by the judge's errors; the human-only (classical) mean is unbiased but rests on the few
labelled cases. Prediction-powered inference (PPI) uses the judge on every case and the
labelled cases to measure and remove its bias:

``θ̂(λ) = mean_unlabelled(λ·f) + mean_labelled(y - λ·f)``

``f`` is the judge's value, ``y`` the human one. The second term, the *rectifier*, is the
judge's average error on the labelled cases; any ``λ`` gives an unbiased estimate when
the labelled cases are a random sample. ``λ = 0`` is the classical mean, ``λ = 1`` plain
PPI; PPI++ picks the ``λ`` that minimises the variance, so it is never (asymptotically)
worse than the classical estimate and gains the more the judge tracks people.

References: Angelopoulos, Bates, Fannjiang, Jordan and Zrnic (2023), "Prediction-powered
inference", Science 382(6671); Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient
Prediction-Powered Inference", arXiv:2311.01453; ``ppi_py.ppi_mean_pointestimate`` and
``ppi_py.ppi_mean_ci``, which the tests check these figures against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from calibration.inference.intervals import normal_interval

__all__ = [
    "MeanEstimate",
    "classical_mean",
    "power_tuned_lambda",
    "ppi_mean",
    "ppi_mean_sampled",
]


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its standard error and interval (``None`` when it cannot be had)."""

    estimate: float
    std_error: float
    ci: tuple[float, float] | None
    n_labelled: int
    n_unlabelled: int
    lam: float | None = None  # the λ used (PPI only)

    def as_dict(self) -> dict[str, object]:
        return {
            "estimate": self.estimate,
            "std_error": self.std_error,
            "ci95": list(self.ci) if self.ci is not None else None,
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
            **({"lambda": self.lam} if self.lam is not None else {}),
        }


def _var(x: np.ndarray, ddof: int) -> float:
    return float(np.var(x, ddof=ddof)) if len(x) > ddof else float("nan")


def power_tuned_lambda(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    w: ArrayLike | None = None,
    w_unlabelled: ArrayLike | None = None,
) -> float:
    """The variance-minimising ``λ`` of PPI++ for a mean, clipped to [0, 1].

    Formula (PPI++ for a mean, as ppi-python computes it): with ``θ₁`` the ``λ = 1``
    estimate, ``g = w(y - θ₁)``, ``ĝ = w(f - θ₁)`` on the ``n`` labelled cases and
    ``ĝᵤ = wᵤ(fᵤ - θ₁)`` on the ``N`` unlabelled ones,

    ``λ = Cov(g, ĝ) / ((1 + n/N) · Var(ĝ ∪ ĝᵤ))``

    with ``Cov`` the 1/n covariance over the labelled cases and ``Var`` the sample
    variance (ddof 1) over every case. Without weights the ``θ₁`` terms cancel and this is
    ``Cov(y, f) / ((1 + n/N) Var(f))``: the more the judge's values move with people's,
    and the more unlabelled cases there are, the more weight the judge gets. ``0`` when
    the judge's values do not vary (they carry no information).
    """
    yl, fl, fu = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    wl = np.ones_like(yl) if w is None else np.asarray(w, dtype=float)
    wu = np.ones_like(fu) if w_unlabelled is None else np.asarray(w_unlabelled, dtype=float)
    n, big_n = len(yl), len(fu)
    if n < 2 or big_n == 0:
        return 0.0
    theta1 = float(np.mean(wu * fu) + np.mean(wl * (yl - fl)))
    g, gh = wl * (yl - theta1), wl * (fl - theta1)
    cov = float(np.mean((g - g.mean()) * (gh - gh.mean())))
    var = float(np.var(np.concatenate([gh, wu * (fu - theta1)]), ddof=1))
    if not var > 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def _ppi(
    y: np.ndarray,
    f: np.ndarray,
    fu: np.ndarray,
    w: np.ndarray,
    wu: np.ndarray,
    lam: float | None,
    confidence: float,
    ddof: int,
) -> MeanEstimate:
    if lam is None:
        lam = power_tuned_lambda(y, f, fu, w=w, w_unlabelled=wu)
    imputed, rectifier = wu * lam * fu, w * (y - lam * f)
    estimate = float(imputed.mean() + rectifier.mean())
    var_imputed = _var(imputed, ddof) / len(fu) if lam else 0.0
    se = math.sqrt(var_imputed + _var(rectifier, ddof) / len(y))
    ci = normal_interval(estimate, se, confidence=confidence)
    return MeanEstimate(
        estimate, se, ci if math.isfinite(se) else None, len(y), len(fu), float(lam)
    )


def _check(y: np.ndarray, f: np.ndarray) -> None:
    if y.ndim != 1 or y.shape != f.shape:
        raise ValueError(f"y and yhat must be 1-D of equal length: {y.shape}, {f.shape}")
    if len(y) == 0:
        raise ValueError("no labelled cases")


def ppi_mean(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    ddof: int = 1,
) -> MeanEstimate:
    """PPI++ estimate of the mean of ``y`` with a normal (CLT) interval.

    ``y`` and ``yhat``: human and judge values of the ``n`` labelled cases (a simple
    random sample of all cases); ``yhat_unlabelled``: the judge's values of the ``N``
    cases nobody labelled (disjoint from the labelled ones). ``lam=None`` tunes ``λ``
    (:func:`power_tuned_lambda`); ``lam=1`` is plain PPI, ``lam=0`` the classical mean.

    Interval: ``θ̂ ± z·sqrt(Var(λ fᵤ)/N + Var(y - λ f)/n)``. The variances use ``ddof``
    (default 1, the unbiased sample variance); ppi-python uses numpy's default ddof 0,
    so with ``ddof=1`` the half-width is larger than ppi-python's by a factor between
    ``sqrt(N/(N-1))`` and ``sqrt(n/(n-1))``, and equal to it with ``ddof=0``. The point
    estimate and ``λ`` are ppi-python's exactly. With no unlabelled case the estimate is
    the classical one.

    How to read it: the human mean over all cases, estimated with the judge's help; the
    interval covers it at the nominal rate in large samples (tests: seeded simulations).
    """
    y_, f, fu = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    _check(y_, f)
    if len(fu) == 0:  # nothing to impute: λ = 0, the classical mean
        only = _ppi(y_, f, np.zeros(1), np.ones_like(y_), np.ones(1), 0.0, confidence, ddof)
        return replace(only, n_unlabelled=0)
    return _ppi(y_, f, fu, np.ones_like(y_), np.ones_like(fu), lam, confidence, ddof)


def ppi_mean_sampled(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_all: ArrayLike,
    weights: ArrayLike,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    ddof: int = 1,
) -> MeanEstimate:
    """PPI++ when the labelled cases were drawn with unequal probabilities (a stratified
    labelling sample: every high-risk case, 10% of the rest).

    ``yhat_all``: the judge's values of **every** judged case, the ``n`` labelled ones
    included (``M`` in all); ``weights``: each labelled case's design weight
    ``dᵢ = 1/πᵢ``, ``πᵢ`` its probability of having been chosen for labelling (only the
    ratios matter: any positive multiple gives the same figures). Estimator:

    ``θ̂(λ) = (1/M) Σ_all λ fᵢ + Σ_labelled dᵢ (yᵢ - λ fᵢ) / Σ_labelled dᵢ``

    The first term is the judge's mean over every case (no sampling, so no weights); the
    second is the judge's mean error over every case, each labelled case standing for
    ``dᵢ`` cases: the Horvitz-Thompson estimate of the error total divided by the
    estimated number of cases ``Σ dᵢ`` (Hájek's ratio form). For a stratified sample with
    ``πᵢ = n_h/M_h`` in stratum ``h``, ``Σ dᵢ = M`` and it is exactly Horvitz-Thompson's
    ``(1/M) Σ (yᵢ - λ fᵢ)/πᵢ``, i.e. each stratum's mean error weighted by its share of
    the cases. It is unbiased (approximately, for the ratio form) for the human mean over
    every case as long as every case could have been drawn. It is ppi-python's estimator
    with ``Yhat_unlabeled = yhat_all`` and ``w = d`` (ppi-python normalises ``w`` to mean
    1); ``λ`` is tuned with the same weights.

    Variance: ``Var(λ f_all)/M + Var(w (y - λ f))/n`` with ``w = d / mean(d)``: the
    Hansen-Hurwitz variance of the reweighted error (the labelled cases treated as ``n``
    draws with probabilities proportional to ``πᵢ``) plus the imputed term's. It leaves
    out the small covariance from the labelled cases being among all (of order 1/M) and
    the gain from stratification, so it errs on the wide side for a stratified sample.
    With equal weights it is :func:`ppi_mean` with every case, labelled ones included,
    in the imputed term.

    References: Horvitz and Thompson (1952), JASA 47(260); Hájek (1971), in Foundations
    of Statistical Inference; Hansen and Hurwitz (1943), Ann. Math. Stat. 14(4); Zrnic and
    Candès (2024), "Active Statistical Inference", ICML; Fisch et al. (2024), "Stratified
    Prediction-Powered Inference", NeurIPS.
    """
    y_, f, fa = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    d = np.asarray(weights, dtype=float)
    _check(y_, f)
    if d.shape != y_.shape or not np.all(np.isfinite(d) & (d > 0)):
        raise ValueError("weights: one positive number (1/inclusion probability) per labelled case")
    if len(fa) < len(y_):
        raise ValueError(f"{len(y_)} labelled cases but only {len(fa)} judged: labels are a subset")
    return _ppi(y_, f, fa, d / d.mean(), np.ones_like(fa), lam, confidence, ddof)


def classical_mean(y: ArrayLike, *, confidence: float = 0.95, ddof: int = 1) -> MeanEstimate:
    """The human-only mean with a normal interval, ``ȳ ± z·s/√n`` (PPI with ``λ = 0``)."""
    y_ = np.asarray(y, dtype=float)
    if len(y_) == 0:
        raise ValueError("no labelled cases")
    se = math.sqrt(_var(y_, ddof) / len(y_))
    mean = float(y_.mean())
    ci = normal_interval(mean, se, confidence=confidence) if math.isfinite(se) else None
    return MeanEstimate(mean, se, ci, len(y_), 0)
