"""Several human annotators: their agreement with each other, and one label per id.

Inter-annotator agreement is the ceiling a judge can be held to: a judge cannot be asked
to agree with people better than they agree with each other. The judge is then compared
with the majority label; ids where the majority is tied are excluded, counted and listed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from typing import Any

import numpy as np

from calibration.agreement.metrics import Weights, cohen_kappa, label_order
from calibration.agreement.multirater import (
    Level,
    category_counts,
    fleiss_kappa_from_counts,
    krippendorff_alpha_from_counts,
)
from calibration.inference.intervals import bootstrap_indices_ci
from calibration.io.labels import ANNOTATOR_FIELD, LabelRecord, LabelSet, as_number
from calibration.io.labels import normalise_label as _norm

__all__ = ["consolidate_annotators", "inter_annotator_agreement"]

TIED = "tied majority"
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


def _is_continuous(human: LabelSet) -> bool:
    numbers = [as_number(r.value) for r in human.records]
    return all(x is not None for x in numbers) and any(
        x is not None and not x.is_integer() for x in numbers
    )


def consolidate_annotators(human: LabelSet) -> LabelSet:
    """One label per id: the majority label, or the mean for continuous scores.

    Ids whose most frequent labels tie are left out and listed under ``"tied majority"``
    in the result's ``excluded``. Other fields are taken from the id's first row.
    """
    if not human.has_annotators:
        return human
    continuous = _is_continuous(human)
    first: dict[str, LabelRecord] = {}
    for record in human.records:
        first.setdefault(record.id, record)
    result = LabelSet(human.path, human.field, [], dict(human.excluded), has_annotators=False)
    for case_id, ratings in _by_id(human).items():
        base = first[case_id]
        fields = {k: v for k, v in base.fields.items() if k != ANNOTATOR_FIELD}
        if continuous:
            value: Any = float(np.mean([as_number(v) for v in ratings.values()]))
        else:
            top = Counter(_norm(v) for v in ratings.values()).most_common()
            if len(top) > 1 and top[0][1] == top[1][1]:
                result.excluded.setdefault(TIED, []).append(case_id)
                continue
            value = top[0][0]
        result.records.append(LabelRecord(case_id, value, fields, base.line))
    return result


def _ratings_table(table: dict[str, dict[str, Any]], annotators: list[str]) -> np.ndarray:
    rows = [[_norm(r[a]) if a in r else None for a in annotators] for r in table.values()]
    return np.array(rows, dtype=object)


def inter_annotator_agreement(
    human: LabelSet, *, weights: Weights = None, n_bootstrap: int = 0, seed: int = 0
) -> dict[str, Any]:
    """Agreement among the annotators of a human label file with an ``annotator`` column.

    Two annotators: Cohen's kappa (weighted too when ``weights`` is given) on the ids both
    labelled. Three or more: Fleiss' kappa on the ids every annotator labelled, and
    Krippendorff's alpha on all ids (nominal; ordinal for linear weights, interval for
    quadratic), which tolerates missing ratings. Pairwise Cohen's kappa is listed as well.
    ``ceiling`` is the headline value: Cohen's kappa for two, Fleiss' kappa for more.
    With ``n_bootstrap`` resamples of items (each item's ratings kept together) Fleiss'
    kappa and Krippendorff's alpha get seeded percentile 95% intervals.
    """
    table = _by_id(human)
    annotators = list(
        dict.fromkeys(str(r.fields.get(ANNOTATOR_FIELD) or "") for r in human.records)
    )
    ratings = _ratings_table(table, annotators)
    order = label_order([v for v in ratings.ravel() if v is not None])
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
    result: dict[str, Any] = {
        "annotators": annotators,
        "n_items": int(len(ratings)),
        "n_complete": int(complete.sum()),
        "pairwise": pairwise,
        "fleiss_kappa": _fleiss(counts[complete]),
        "fleiss_kappa_ci95": None,
        "krippendorff_alpha": krippendorff_alpha_from_counts(counts, level=level, values=values),
        "krippendorff_alpha_ci95": None,
        "alpha_level": level,
    }
    if n_bootstrap:
        complete_counts = counts[complete]
        result["fleiss_kappa_ci95"] = bootstrap_indices_ci(
            len(complete_counts),
            lambda idx: _fleiss(complete_counts[idx]),
            n_resamples=n_bootstrap,
            seed=seed,
        )
        result["krippendorff_alpha_ci95"] = bootstrap_indices_ci(
            len(counts),
            lambda idx: krippendorff_alpha_from_counts(counts[idx], level=level, values=values),
            n_resamples=n_bootstrap,
            seed=seed,
        )
    first_pair = next(iter(pairwise.values()), {"kappa": float("nan")})
    two = len(annotators) == 2
    result["method"] = "cohen_kappa" if two else "fleiss_kappa"
    result["ceiling"] = first_pair["kappa"] if two else result["fleiss_kappa"]
    return result


def _fleiss(counts: np.ndarray) -> float:
    """Fleiss' kappa of fully rated items; ``nan`` when there are none."""
    return (
        fleiss_kappa_from_counts(counts) if len(counts) and counts[0].sum() >= 2 else float("nan")
    )


def _level(order: list[Any], weights: Weights) -> Level:
    """Alpha's level for the weighting asked for; nominal when the labels are not numbers."""
    level = _ALPHA_LEVEL[weights]
    numeric = all(as_number(v) is not None for v in order)
    return level if level == "nominal" or numeric else "nominal"
