"""Every statistic for one set of paired labels: the body of a calibration report.

The scale decides which statistics apply: ``categorical`` labels (text) get agreement,
kappa and the confusion matrix; ``ordinal`` labels (whole numbers) get those plus weighted
kappa, correlations and MAE; ``continuous`` scores get correlations and MAE only, kappa
being undefined for them.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np

from calibration.agreement.coefficients import (
    ac1_from_confusion,
    ac1_from_confusions,
    prevalence_note,
)
from calibration.agreement.correlation import correlations, grouped_correlations
from calibration.agreement.metrics import (
    Weights,
    _weight_matrix,
    adjacent_agreement,
    balanced_accuracy,
    kappa_from_confusion,
    kappa_from_confusions,
    label_values,
    mean_absolute_error,
    per_class_scores,
)
from calibration.agreement.multirater import krippendorff_alpha_from_counts
from calibration.agreement.small_sample import cohen_chance, fce_kappa_interval, kappa_type_interval
from calibration.estimates.binary import binary_rates
from calibration.inference.intervals import (
    DEFAULT_RESAMPLES,
    bootstrap_table_ci,
    posterior_table_ci,
    wilson_interval,
)
from calibration.io.classes import choose_positive, order_labels
from calibration.io.labels import as_number, normalise_label
from calibration.pairs.grouped import widen_for_groups

__all__ = ["AnalysisOptions", "analyse", "choose_positive", "order_labels", "scale_of"]

Scale = Literal["categorical", "ordinal", "continuous"]

MAX_DISAGREEMENTS = 500


@dataclass(frozen=True)
class AnalysisOptions:
    """Choices that change the statistics (not where files go)."""

    weights: Weights = None
    labels: tuple[str, ...] | None = None
    positive_label: str | None = None
    n_bootstrap: int = DEFAULT_RESAMPLES
    seed: int = 0


def scale_of(human: Sequence[Any], judge: Sequence[Any]) -> Scale:
    """``continuous`` if both sides are numbers and some are fractional, ``ordinal`` if all
    are whole numbers, else ``categorical``."""
    # Over the distinct values: millions of labels hold a handful of them.
    numbers = [as_number(v) for v in dict.fromkeys(itertools.chain(human, judge))]
    if not numbers or any(x is None for x in numbers):
        return "categorical"
    if all(x is not None and x.is_integer() for x in numbers):
        return "ordinal"
    return "continuous"


def _matrix_ci(
    h: np.ndarray,
    j: np.ndarray,
    k: int,
    opts: AnalysisOptions,
    of_matrix: Callable[..., float],
    batched: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[float, float] | None:
    """Bootstrap interval of a statistic of the confusion matrix; ``None`` when intervals
    are switched off (``n_bootstrap = 0``). The cases are resampled through the matrix's
    cell counts (:func:`bootstrap_table_ci`): the same bootstrap at any n, in constant
    memory."""
    if opts.n_bootstrap == 0:
        return None
    matrix = np.bincount(h * k + j, minlength=k * k).reshape(k, k)
    return bootstrap_table_ci(
        matrix, of_matrix, n_resamples=opts.n_bootstrap, seed=opts.seed, batched=batched
    )


def _posterior_ci(
    matrix: np.ndarray,
    opts: AnalysisOptions,
    of_matrix: Callable[..., float],
    batched: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[float, float] | None:
    """The Dirichlet posterior interval of a statistic of the confusion matrix, as many
    draws as bootstrap resamples and on the same seed; ``None`` with intervals off."""
    if opts.n_bootstrap == 0:
        return None
    return posterior_table_ci(
        matrix, of_matrix, n_draws=opts.n_bootstrap, seed=opts.seed, batched=batched
    )


def _coefficient_ci(
    out: dict[str, Any],
    name: str,
    boot: tuple[float, float] | None,
    matrix: np.ndarray,
    chance: float,
    disagreement: np.ndarray | None = None,
    large_sample: tuple[float, float] | None = None,
    posterior: tuple[float, float] | None = None,
) -> None:
    """Set ``NAME_ci95`` (and its ``_method`` and ``_reason``): the bootstrap interval, or,
    where it is degenerate, the exact agreement interval (:mod:`calibration.agreement.small_sample`)."""
    if boot is None:  # no bootstrap asked for (--bootstrap 0)
        out[f"{name}_ci95"] = None
        return
    interval = kappa_type_interval(
        boot,
        matrix,
        chance,
        disagreement=disagreement,
        large_sample=large_sample,
        posterior=posterior,
    )
    out[f"{name}_ci95"] = interval.ci
    out[f"{name}_ci95_method"] = interval.method
    out[f"{name}_ci95_reason"] = interval.reason


def _ac1_chance(matrix: np.ndarray) -> float:
    """Gwet's chance agreement ``Σ π_k (1 - π_k) / (q - 1)`` (see coefficients)."""
    n, q = matrix.sum(), matrix.shape[0]
    share = (matrix.sum(axis=0) + matrix.sum(axis=1)) / (2 * n)
    return float((share * (1 - share)).sum() / (q - 1))


def _pair_alpha(h: np.ndarray, j: np.ndarray, k: int) -> float:
    """Krippendorff's alpha (nominal) of the judge and people as two raters of each case."""
    counts = np.zeros((len(h), k))
    np.add.at(counts, (np.arange(len(h)), h), 1)
    np.add.at(counts, (np.arange(len(j)), j), 1)
    return krippendorff_alpha_from_counts(counts, level="nominal")


def _class_rates(matrix: np.ndarray, order: list[str], per_class: dict[str, Any]) -> None:
    """Add each class's TPR (recall) and TNR, one class against the rest, with Wilson
    intervals: how often the judge finds the class, and how often it keeps it apart."""
    n = int(matrix.sum())
    for i, label in enumerate(order):
        tp, row, col = int(matrix[i, i]), int(matrix[i].sum()), int(matrix[:, i].sum())
        tn, negatives = n - row - col + tp, n - row
        per_class[label].update(
            tpr=tp / row if row else float("nan"),
            tpr_ci95=wilson_interval(tp, row) if row else None,
            tnr=tn / negatives if negatives else float("nan"),
            tnr_ci95=wilson_interval(tn, negatives) if negatives else None,
        )


def _undefined_reason(matrix: np.ndarray, order: list[str]) -> str:
    if matrix.sum() == 0:
        return "kappa undefined: no cases"
    used = [order[i] for i in np.flatnonzero(matrix.sum(axis=0) + matrix.sum(axis=1))]
    return f"kappa undefined: the labels do not vary (both sides only say {used[0]!r})"


def _categorical(
    h_lab: list[str],
    j_lab: list[str],
    order: list[str],
    opts: AnalysisOptions,
    unlabelled: Sequence[str],
) -> dict[str, Any]:
    index = {label: i for i, label in enumerate(order)}
    h = np.fromiter((index[v] for v in h_lab), dtype=int, count=len(h_lab))
    j = np.fromiter((index[v] for v in j_lab), dtype=int, count=len(j_lab))
    k = len(order)
    matrix = np.bincount(h * k + j, minlength=k * k).reshape(k, k)
    n = int(matrix.sum())
    kappa = kappa_from_confusion(matrix)
    ac1 = ac1_from_confusion(matrix)
    out: dict[str, Any] = {
        "labels": order,
        "observed_agreement": float(np.trace(matrix) / n) if n else None,
        "expected_agreement": float((matrix.sum(0) * matrix.sum(1)).sum() / n**2) if n else None,
        "kappa": kappa,
        "kappa_undefined_reason": None if np.isfinite(kappa) else _undefined_reason(matrix, order),
        "kappa_ci95": None,
        "ac1": ac1,
        "ac1_ci95": None,
        "krippendorff_alpha": _pair_alpha(h, j, k),
        "weights": opts.weights,
        "weighted_kappa": None,
        "weighted_kappa_ci95": None,
        "confusion_matrix": {"labels": order, "matrix": matrix.tolist()},
        "per_class": per_class_scores(h, j, labels=range(k)),
        "balanced_accuracy": balanced_accuracy(h, j, labels=range(k)),
    }
    out["per_class"] = {order[i]: s for i, s in out["per_class"].items()}
    if np.isfinite(kappa):
        boot = _matrix_ci(h, j, k, opts, kappa_from_confusion, kappa_from_confusions)
        chance = cohen_chance(matrix, _weight_matrix(k, None))
        _coefficient_ci(out, "kappa", boot, matrix, chance, large_sample=fce_kappa_interval(matrix))
    if np.isfinite(ac1):
        boot = _matrix_ci(h, j, k, opts, ac1_from_confusion, ac1_from_confusions)
        _coefficient_ci(out, "ac1", boot, matrix, _ac1_chance(matrix))
    _class_rates(matrix, order, out["per_class"])
    if opts.weights:
        # Weighed on the labels' values (the scale's own distances), not their positions.
        values = label_values(order)
        weigh = partial(kappa_from_confusion, weights=opts.weights, values=values)
        stacked = partial(kappa_from_confusions, weights=opts.weights, values=values)
        weighted = weigh(matrix)
        out["weighted_kappa"] = weighted
        if np.isfinite(weighted):
            w = _weight_matrix(k, opts.weights, label_values(order))
            _coefficient_ci(
                out,
                "weighted_kappa",
                _matrix_ci(h, j, k, opts, weigh, stacked),
                matrix,
                cohen_chance(matrix, w),
                w,
                fce_kappa_interval(matrix, w),
                _posterior_ci(matrix, opts, weigh, stacked),
            )
    binary = binary_rates(
        h_lab, j_lab, order=order, judge_unlabelled=unlabelled, positive_label=opts.positive_label
    )
    if binary is not None:
        out["binary"] = binary
    out["prevalence_note"] = prevalence_note(out)
    return out


def scale_mismatch(y_human: np.ndarray, y_judge: np.ndarray) -> str | None:
    """Why two numeric sides are not on one scale, or ``None`` when they are.

    One scale: the observed ranges share more than a point (a constant side lies inside the
    other's range) and neither is over 10 times as wide as the other. A judge's 0-1 score
    against a 1-5 human rating fails both; a judge that only uses 2-4 of a 1-5 scale passes.
    Differences (MAE, exact and adjacent agreement) need one scale; correlations do not.
    """
    if not len(y_human):
        return None
    h0, h1 = float(y_human.min()), float(y_human.max())
    j0, j1 = float(y_judge.min()), float(y_judge.max())
    overlap = min(h1, j1) - max(h0, j0)
    narrow, wide = sorted([h1 - h0, j1 - j0])
    one_scale = overlap >= 0 if narrow == 0 else overlap > 0 and wide <= 10 * narrow
    if one_scale:
        return None
    return (
        f"the two sides are not on one scale (human {h0:g} to {h1:g}, judge {j0:g} to "
        f"{j1:g}): no MAE or exact agreement; correlations still apply"
    )


def _numeric(hx: np.ndarray, jx: np.ndarray, scale: Scale, groups: Sequence[Any] | None):
    mismatch = scale_mismatch(hx, jx)
    out: dict[str, Any] = {
        "correlation": correlations(hx, jx),
        "mae": mean_absolute_error(hx, jx) if mismatch is None else None,
        "scale_mismatch": mismatch,
    }
    if scale == "ordinal" and mismatch is None:
        out["exact_agreement"] = float(np.mean(hx == jx)) if len(hx) else None
        out["adjacent_agreement"] = adjacent_agreement(hx, jx)
    if groups is not None:
        out["correlation_by_group"] = grouped_correlations(hx, jx, groups=groups)
    return out


def _continuous_placeholders() -> dict[str, Any]:
    reason = (
        "kappa undefined: the scores are continuous; kappa needs categories "
        "(use --threshold to turn scores into pass/fail)"
    )
    keys = ["labels", "observed_agreement", "expected_agreement", "kappa", "kappa_ci95", "ac1"]
    keys += ["ac1_ci95", "krippendorff_alpha", "prevalence_note"]
    return {**dict.fromkeys(keys), "kappa_undefined_reason": reason, "weighted_kappa": None}


def _disagreements(ids, h_lab, j_lab, hx, jx, positive: str | None) -> list[dict[str, Any]]:
    """The first :data:`MAX_DISAGREEMENTS` disagreements, worst first; only those shown
    are built (a run of millions of cases has hundreds of thousands)."""
    chosen = [i for i in range(len(ids)) if h_lab[i] != j_lab[i]]
    if hx is not None:
        # heapq.nsmallest is sorted(...)[:n], stable: the same rows as a full sort.
        chosen = heapq.nsmallest(MAX_DISAGREEMENTS, chosen, key=lambda i: -abs(hx[i] - jx[i]))
    elif positive is not None:
        # A false pass (the judge passes what people fail) is the costly error for a gate.
        chosen = [i for i in chosen if j_lab[i] == positive] + [
            i for i in chosen if j_lab[i] != positive
        ]
    rows = []
    for i in chosen[:MAX_DISAGREEMENTS]:
        row: dict[str, Any] = {"id": ids[i], "human": h_lab[i], "judge": j_lab[i]}
        if hx is not None:
            row["distance"] = abs(float(hx[i] - jx[i]))
        rows.append(row)
    return rows


def _as_numbers(values: Sequence[Any]) -> np.ndarray:
    """The values as a float array, converting each distinct value once."""
    number = {v: as_number(v) for v in dict.fromkeys(values)}
    return np.fromiter((number[v] for v in values), dtype=float, count=len(values))


def _widen_for_groups(result, h_lab, j_lab, order, groups, options, unlabelled: int) -> None:
    """With groups (``--group-field``), the intervals also resample whole groups
    (:mod:`calibration.pairs.grouped`)."""
    index = {label: i for i, label in enumerate(order)}
    h = np.fromiter((index[v] for v in h_lab), dtype=int, count=len(h_lab))
    j = np.fromiter((index[v] for v in j_lab), dtype=int, count=len(j_lab))
    widen_for_groups(result, h, j, order, groups, n_resamples=options.n_bootstrap,
                     seed=options.seed, unlabelled=unlabelled)  # fmt: skip


def analyse(
    ids: Sequence[str],
    human: Sequence[Any],
    judge: Sequence[Any],
    *,
    options: AnalysisOptions = AnalysisOptions(),
    groups: Sequence[Any] | None = None,
    order: list[str] | None = None,
    judge_unlabelled: Sequence[Any] = (),
) -> dict[str, Any]:
    """All statistics of one set of paired labels (values may be raw text or numbers).

    ``judge_unlabelled`` holds the judge's labels of the cases no person labelled: they
    enter only the judge's pass rate that the corrected pass rate starts from.
    """
    scale = scale_of(human, judge)
    h_lab = [normalise_label(v) for v in human]
    j_lab = [normalise_label(v) for v in judge]
    result: dict[str, Any] = {"n": len(ids), "scale": scale}
    if scale == "continuous":
        result.update(_continuous_placeholders())
    else:
        order = order or order_labels([*h_lab, *j_lab], explicit=options.labels)
        unlabelled = [normalise_label(v) for v in judge_unlabelled]
        result.update(_categorical(h_lab, j_lab, order, options, unlabelled))
        if groups is not None and options.n_bootstrap:
            _widen_for_groups(result, h_lab, j_lab, order, groups, options, len(unlabelled))
    hx = jx = None
    if scale != "categorical":
        hx, jx = _as_numbers(human), _as_numbers(judge)
        result.update(_numeric(hx, jx, scale, groups))
    positive = result.get("binary", {}).get("positive_label")
    result["disagreements"] = _disagreements(ids, h_lab, j_lab, hx, jx, positive)
    return result
