"""Several human annotators: their agreement with each other, and one label per id.

Inter-annotator agreement is the ceiling a judge can be held to: a judge cannot be asked
to agree with people better than they agree with each other. It is measured one rater
against another, on the judge's own weights: Cohen's (weighted) kappa for two annotators,
Fleiss' (weighted) kappa in Gwet's generalisation for more, over every item with at least
two ratings, so named annotators who each rate part of the items (``judge label
--overlap``) still give a ceiling.

The judge is then compared with one label per id, consolidated as the field does, and
no id is dropped: numeric ratings on a whole-number scale take the **median** (HANNA,
SummEval), the lower of the two middle ratings when an even number of them puts it
between two levels; continuous scores the **mean**; labels the **majority**, and a tied
majority goes to the tied label that comes first in the label order, which for a
pass/fail scale is the failing label (a case one of two people fails is not counted as a
pass: FaithBench's worst-label pooling). Every id settled by a rule is counted and listed
under its rule (``LabelSet.adjudicated``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from statistics import median_low
from typing import Any

import numpy as np

from calibration.agreement.metrics import Weights, cohen_kappa, label_order, label_values
from calibration.agreement.multirater import (
    Level,
    alpha_distance,
    category_counts,
    coincidence_matrix,
    generalised_fleiss_kappa,
    krippendorff_alpha_from_counts,
)
from calibration.agreement.small_sample import alpha_interval
from calibration.inference.intervals import bootstrap_indices_ci
from calibration.io.classes import order_labels
from calibration.io.labels import ANNOTATOR_FIELD, LabelRecord, LabelSet, as_number
from calibration.io.labels import normalise_label as _norm

__all__ = ["CONSOLIDATION_RULES", "consolidate_annotators", "inter_annotator_agreement"]

TIED = "tied majority: the tied label first in the label order"
BETWEEN_LEVELS = "median between two levels: the lower taken"
CONSOLIDATION_RULES = {
    "categorical": "majority label; a tie goes to the tied label first in the label order "
    "(pass/fail: the failing label)",
    "ordinal": "median rating; between two levels, the lower",
    "continuous": "mean score",
}
_ALPHA_LEVEL: dict[Weights, Level] = {
    None: "nominal",
    "linear": "ordinal",
    "quadratic": "interval",
}


def _by_id(human: LabelSet) -> dict[str, dict[str, Any]]:
    """id -> {annotator: label}, in file order."""
    table: dict[str, dict[str, Any]] = defaultdict(dict)
    for record in human.records:
        table[record.id][str(record.fields.get(ANNOTATOR_FIELD) or "")] = record.value
    return table


def _scale(human: LabelSet) -> str:
    numbers = [as_number(r.value) for r in human.records]
    if not numbers or any(x is None for x in numbers):
        return "categorical"
    return "ordinal" if all(x is not None and x.is_integer() for x in numbers) else "continuous"


def consolidation_rule(human: LabelSet) -> str:
    """The rule :func:`consolidate_annotators` applies to this file, in words."""
    return CONSOLIDATION_RULES[_scale(human)]


def _one_label(ratings: list[Any], scale: str, rank: dict[str, int]) -> tuple[Any, str | None]:
    """The consolidated label of one id, and the rule that settled it if one had to."""
    if scale == "continuous":
        return float(np.mean([as_number(v) for v in ratings])), None
    if scale == "ordinal":
        numbers = sorted(float(as_number(v) or 0.0) for v in ratings)
        middle = float(np.median(numbers))
        low = float(median_low(numbers))
        return int(low), (BETWEEN_LEVELS if middle != low else None)
    top = Counter(_norm(v) for v in ratings).most_common()
    tied = [label for label, count in top if count == top[0][1]]
    if len(tied) == 1:
        return tied[0], None
    return min(tied, key=lambda label: rank[label]), TIED


def consolidate_annotators(human: LabelSet) -> LabelSet:
    """One label per id, by the rules of the module docstring; no id is left out.

    Ids settled by a rule (a tied majority, a median between two levels) are listed under
    the rule in the result's ``adjudicated``. Other fields are taken from the id's first
    row.
    """
    if not human.has_annotators:
        return human
    scale = _scale(human)
    order = order_labels([_norm(r.value) for r in human.records])
    rank = {label: i for i, label in enumerate(order)}
    first: dict[str, LabelRecord] = {}
    for record in human.records:
        first.setdefault(record.id, record)
    result = LabelSet(human.path, human.field, [], dict(human.excluded), has_annotators=False)
    for case_id, ratings in _by_id(human).items():
        base = first[case_id]
        fields = {k: v for k, v in base.fields.items() if k != ANNOTATOR_FIELD}
        value, rule = _one_label(list(ratings.values()), scale, rank)
        if rule is not None:
            result.adjudicated.setdefault(rule, []).append(case_id)
        result.records.append(LabelRecord(case_id, value, fields, base.line))
    return result


def _ratings_table(table: dict[str, dict[str, Any]], annotators: list[str]) -> np.ndarray:
    rows = [[_norm(r[a]) if a in r else None for a in annotators] for r in table.values()]
    return np.array(rows, dtype=object)


def inter_annotator_agreement(
    human: LabelSet, *, weights: Weights = None, n_bootstrap: int = 0, seed: int = 0
) -> dict[str, Any]:
    """Agreement among the annotators of a human label file with an ``annotator`` column.

    Pairwise Cohen's kappa (weighted too when ``weights`` is given, on the labels' values)
    on the ids both annotators labelled; Fleiss' kappa in Gwet's generalisation
    (:func:`calibration.agreement.multirater.generalised_fleiss_kappa`) over the ids with at least
    two ratings, unweighted and, with ``weights``, weighted the same way; Krippendorff's
    alpha on all ids (nominal; ordinal for linear weights, interval for quadratic).

    ``ceiling`` is the headline, one rater against another on the judge's weights: for
    two annotators their Cohen's kappa (weighted with ``weights``), for more the
    (weighted) generalised Fleiss' kappa; ``ceiling_weights`` says which weights. With
    ``n_bootstrap`` resamples of items (each item's ratings kept together) Fleiss' kappa,
    the ceiling and Krippendorff's alpha get seeded percentile 95% intervals.
    """
    table = _by_id(human)
    annotators = list(
        dict.fromkeys(str(r.fields.get(ANNOTATOR_FIELD) or "") for r in human.records)
    )
    ratings = _ratings_table(table, annotators)
    order = label_order([v for v in ratings.ravel() if v is not None])
    numbers = label_values(order)
    pairwise = {}
    for i, j in combinations(range(len(annotators)), 2):
        both = np.array([a is not None and b is not None for a, b in ratings[:, [i, j]]])
        pair = ratings[both][:, [i, j]]
        pairwise[f"{annotators[i]} vs {annotators[j]}"] = {
            "n": int(both.sum()),
            "kappa": cohen_kappa(pair[:, 0], pair[:, 1], labels=order),
            "weighted_kappa": cohen_kappa(pair[:, 0], pair[:, 1], labels=order, weights=weights)
            if weights
            else None,
        }
    complete = np.array([all(v is not None for v in row) for row in ratings], dtype=bool)
    level = _level(order, weights)
    counts = category_counts(ratings, order)
    values = np.asarray(order, dtype=float) if level == "interval" else None

    def fleiss(c: np.ndarray, w: Weights = None) -> float:
        return generalised_fleiss_kappa(c, weights=w, values=numbers)

    two = len(annotators) == 2
    result: dict[str, Any] = {
        "annotators": annotators,
        "n_items": int(len(ratings)),
        "n_complete": int(complete.sum()),
        "n_multiply_rated": int((counts.sum(axis=1) >= 2).sum()),
        "n_ratings": int(counts.sum()),
        "pairwise": pairwise,
        "fleiss_kappa": fleiss(counts),
        "fleiss_kappa_ci95": None,
        "weighted_fleiss_kappa": fleiss(counts, weights) if weights else None,
        "krippendorff_alpha": krippendorff_alpha_from_counts(counts, level=level, values=values),
        "krippendorff_alpha_ci95": None,
        "alpha_level": level,
        "method": "cohen_kappa" if two else "fleiss_kappa",
        "ceiling_weights": weights,
        "ceiling_ci95": None,
        "consolidation": consolidation_rule(human),
    }
    first_pair = next(iter(pairwise.values()), {"kappa": float("nan"), "weighted_kappa": None})
    if two:
        result["ceiling"] = first_pair["weighted_kappa"] if weights else first_pair["kappa"]
    else:
        result["ceiling"] = result["weighted_fleiss_kappa"] if weights else result["fleiss_kappa"]
    if n_bootstrap:
        result.update(_intervals(ratings, counts, order, weights, level, values, n_bootstrap, seed))
    return result


def _intervals(ratings, counts, order, weights, level, values, n_bootstrap: int, seed: int):
    """Seeded percentile intervals over resampled items (an item's ratings together)."""
    numbers = label_values(order)

    def ci(statistic) -> tuple[float, float]:
        return bootstrap_indices_ci(len(counts), statistic, n_resamples=n_bootstrap, seed=seed)

    out: dict[str, Any] = {
        "fleiss_kappa_ci95": ci(lambda idx: generalised_fleiss_kappa(counts[idx])),
        "krippendorff_alpha_ci95": _alpha_ci(
            ci(lambda idx: krippendorff_alpha_from_counts(counts[idx], level=level, values=values)),
            counts,
            level,
            values,
        ),
    }
    if ratings.shape[1] == 2:
        both = np.array([a is not None and b is not None for a, b in ratings])
        pair = ratings[both]
        out["ceiling_ci95"] = bootstrap_indices_ci(
            len(pair),
            lambda idx: cohen_kappa(pair[idx, 0], pair[idx, 1], labels=order, weights=weights),
            n_resamples=n_bootstrap,
            seed=seed,
        )
    elif weights:
        out["ceiling_ci95"] = ci(
            lambda idx: generalised_fleiss_kappa(counts[idx], weights=weights, values=numbers)
        )
    else:
        out["ceiling_ci95"] = out["fleiss_kappa_ci95"]
    return out


def _alpha_ci(bootstrap, counts, level, values) -> tuple[float, float] | None:
    """The bootstrap interval of alpha, or the exact one where it is degenerate (a few
    unanimous items: calibration.agreement.small_sample.alpha_interval)."""
    coincidence = coincidence_matrix(counts)
    if coincidence is None:
        return None
    distance = alpha_distance(coincidence, level=level, values=values)
    return alpha_interval(bootstrap, counts, distance=distance).ci


def _level(order: list[Any], weights: Weights) -> Level:
    """Alpha's level for the weighting asked for; nominal when the labels are not numbers."""
    level = _ALPHA_LEVEL[weights]
    numeric = all(as_number(v) is not None for v in order)
    return level if level == "nominal" or numeric else "nominal"
