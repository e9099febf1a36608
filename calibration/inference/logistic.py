"""Logistic regression by Newton-Raphson with heteroskedasticity-robust (sandwich) errors.

Small and exact on purpose: a maximum-likelihood fit with no penalty (scikit-learn's
default L2 penalty would bias the odds ratios we want to read), the robust covariance by
hand, and a plain refusal when the likelihood has no maximum (separation) instead of
numbers that only look like estimates. The tests check coefficients and errors against
``statsmodels.Logit(...).fit(cov_type="HC0" | "HC1")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from calibration.inference.intervals import normal_quantile

__all__ = ["LogitFit", "fit_logit", "independent_columns"]

CovType = Literal["HC0", "HC1"]
# A fitted probability this close to 0 or 1 means the likelihood rose by pushing a
# coefficient toward infinity: (quasi-)complete separation.
SEPARATION_EPS = 1e-8


@dataclass(frozen=True)
class LogitFit:
    """Coefficients, robust standard errors and Wald tests of a logistic regression.

    ``converged`` is False and ``separated`` True when no finite maximum exists (the
    figures are then not estimates and must not be reported).
    """

    coef: np.ndarray
    se: np.ndarray
    cov: np.ndarray
    converged: bool
    separated: bool
    iterations: int
    cov_type: CovType

    def z(self) -> np.ndarray:
        return self.coef / self.se

    def p_values(self) -> np.ndarray:
        return 2 * stats.norm.sf(np.abs(self.z()))

    def odds_ratio_ci(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """``exp(β ± z·se)``: the Wald interval of each odds ratio."""
        q = normal_quantile(confidence)
        return np.exp(self.coef - q * self.se), np.exp(self.coef + q * self.se)


def _sandwich(x: np.ndarray, y: np.ndarray, p: np.ndarray, cov_type: CovType) -> np.ndarray:
    """``(X'WX)⁻¹ X' diag((y - p)²) X (X'WX)⁻¹``, times ``n/(n-k)`` for HC1."""
    bread = np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))
    score = x * (y - p)[:, None]
    cov = bread @ (score.T @ score) @ bread
    n, k = x.shape
    return cov * n / (n - k) if cov_type == "HC1" else cov


def fit_logit(
    x: ArrayLike,
    y: ArrayLike,
    *,
    cov_type: CovType = "HC1",
    max_iter: int = 100,
    tol: float = 1e-10,
) -> LogitFit:
    """Maximum-likelihood logistic regression of 0/1 ``y`` on the columns of ``x``.

    Model: ``P(y = 1) = 1 / (1 + exp(-x'β))``; ``x`` must hold its own intercept column.
    Fitted by Newton-Raphson (IRLS) from ``β = 0`` until the largest step is under
    ``tol``. Standard errors are the robust sandwich ``A⁻¹ B A⁻¹`` with ``A`` the Fisher
    information and ``B`` the outer product of the per-case scores (HC0; HC1 multiplies
    by ``n/(n-k)``): valid even if the logistic form is only an approximation. ``exp(β)``
    is the odds ratio per unit of the covariate.

    References: White (1980), Econometrica 48(4); Agresti (2013), Categorical Data
    Analysis, 3rd ed., ch. 4-5; Albert and Anderson (1984), Biometrika 71(1) (separation).
    """
    xx, yy = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    beta = np.zeros(xx.shape[1])
    converged, iteration = False, 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        p = special.expit(xx @ beta)
        hessian = xx.T @ (xx * (p * (1 - p))[:, None])
        try:
            step = np.linalg.solve(hessian, xx.T @ (yy - p))
        except np.linalg.LinAlgError:
            break
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    p = special.expit(xx @ beta)
    separated = not converged or bool(np.any((p < SEPARATION_EPS) | (p > 1 - SEPARATION_EPS)))
    if separated:
        nan = np.full_like(beta, np.nan)
        return LogitFit(beta, nan, np.diag(nan), converged, True, iteration, cov_type)
    cov = _sandwich(xx, yy, p, cov_type)
    return LogitFit(beta, np.sqrt(np.diag(cov)), cov, True, False, iteration, cov_type)


def independent_columns(x: ArrayLike) -> list[int]:
    """Indices of columns kept left to right, each one not a linear combination of those
    before it (the rest would make the fit singular)."""
    xx = np.asarray(x, dtype=float)
    kept: list[int] = []
    for j in range(xx.shape[1]):
        trial = [*kept, j]
        if np.linalg.matrix_rank(xx[:, trial]) == len(trial):
            kept.append(j)
    return kept
