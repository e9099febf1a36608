"""The kappa-type intervals ``judge calibrate`` prints, for many samples at once.

:func:`cli_kappa_intervals` gives what :func:`calibration.pairs.analysis.analyse` prints
for the cases behind a confusion matrix, with the CLI's defaults (2000 resamples, seed
0): the same classes (only those either side used), the same multinomial and Dirichlet
draws, and the project's own :func:`~calibration.agreement.small_sample.kappa_type_interval`;
only the statistic of each draw is vectorised. ``tests/unit/test_interval_coverage.py``
checks it against ``analyse`` to 1e-12, samples with an unused class among them.
"""

from __future__ import annotations

import numpy as np

from calibration.agreement.metrics import _weight_matrix
from calibration.agreement.small_sample import (
    cohen_chance,
    fce_kappa_interval,
    kappa_type_interval,
)
from calibration.inference.intervals import DEFAULT_RESAMPLES, dirichlet_tables

CLI_RESAMPLES = DEFAULT_RESAMPLES  # what judge calibrate draws
CLI_SEED = 0  # AnalysisOptions' seed: the same for every sample the CLI sees

__all__ = ["CLI_RESAMPLES", "CLI_SEED", "batched", "cli_kappa_intervals"]


def batched(tables: np.ndarray, statistic: str, w: np.ndarray) -> np.ndarray:
    """Kappa (``w``-weighted) or AC1 of each table in ``tables`` (``(..., k, k)``):
    :func:`~calibration.agreement.metrics.kappa_from_confusion` and
    :func:`~calibration.agreement.coefficients.ac1_from_confusion`, vectorised."""
    n = tables.sum(axis=(-1, -2))
    with np.errstate(divide="ignore", invalid="ignore"):
        if statistic == "ac1":
            a = np.trace(tables, axis1=-2, axis2=-1) / n
            share = (tables.sum(-1) + tables.sum(-2)) / (2 * n[..., None])
            e = (share * (1 - share)).sum(-1) / (tables.shape[-1] - 1)
            return np.where(e < 1, (a - e) / (1 - e), np.nan)
        expected = tables.sum(-1)[..., :, None] * tables.sum(-2)[..., None, :] / n[..., None, None]
        return 1 - (w * tables).sum(axis=(-1, -2)) / (w * expected).sum(axis=(-1, -2))


def _percentile(values: np.ndarray, n_draws: int) -> tuple[float, float] | None:
    """:func:`calibration.inference.intervals._percentile_interval`, ``None`` for nan."""
    finite = values[np.isfinite(values)]
    if len(finite) == 0 or len(finite) < n_draws / 2:
        return None
    low, high = np.quantile(finite, [0.025, 0.975])
    return (float(low), float(high))


def cli_kappa_intervals(
    matrix: np.ndarray,
    weights: str | None,
    values: np.ndarray,
    *,
    n_bootstrap: int = CLI_RESAMPLES,
    seed: int = CLI_SEED,
) -> dict[str, tuple[float, float] | None]:
    """``kappa_ci95`` and ``ac1_ci95`` (``weights`` None) or ``weighted_kappa_ci95`` as
    :func:`calibration.pairs.analysis.analyse` prints them for the cases behind the
    full-scale ``matrix`` (classes with the level numbers ``values``). Like the CLI, it
    keeps only the classes either side used (a 1-5 sample without a 2 is a 4 x 4 table,
    weighed on 1, 3, 4, 5) and draws each bootstrap and posterior with one seed."""
    used = (matrix.sum(axis=0) + matrix.sum(axis=1)) > 0
    m = matrix[np.ix_(used, used)]
    k, n = len(m), int(m.sum())
    w = _weight_matrix(k, weights, values[used])  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, m.ravel() / n, size=n_bootstrap).reshape(-1, k, k).astype(float)
    out: dict[str, tuple[float, float] | None] = {}
    names = ("kappa", "ac1") if weights is None else ("weighted_kappa",)
    for name in names:
        statistic = "ac1" if name == "ac1" else "kappa"
        if not np.isfinite(batched(m[None].astype(float), statistic, w)[0]):
            out[name] = None
            continue
        boot = _percentile(batched(draws, statistic, w), n_bootstrap)
        if name == "ac1":
            share = (m.sum(axis=0) + m.sum(axis=1)) / (2 * n)
            chance = float((share * (1 - share)).sum() / (k - 1))
            out[name] = kappa_type_interval(boot, m, chance).ci
            continue
        disagreement = None if weights is None else w
        posterior = None
        if weights is not None:
            tables = dirichlet_tables(m, n_draws=n_bootstrap, seed=seed)
            posterior = _percentile(batched(tables, "kappa", w), n_bootstrap)
        out[name] = kappa_type_interval(
            boot,
            m,
            cohen_chance(m, w),
            disagreement=disagreement,
            large_sample=fce_kappa_interval(m, disagreement),
            posterior=posterior,
        ).ci
    return out
