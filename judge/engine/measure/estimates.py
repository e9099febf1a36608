"""Prediction-powered estimates in a graded set's summary, from human labels of some cases.

The summary's own figures describe the judge. With human labels of some of the cases
(`judge.engine.measure.human_labels`) the summary gains `ppi`: for the pass rate (a rubric with
two labels, `abstained` aside), the mean score (0..1; a human label stands for the score
the rubric gives it: faithful 1, unfaithful 0, relevance (s - 1) / 4, A 1, tie 0.5, B 0,
unless the label row has its own `score`) and the mean label (numeric labels, relevance
1-5), overall and (under `by_slice.<name>.ppi`) per slice:

- `estimate`, `ci95_low`, `ci95_high`: the PPI++ estimate (power-tuned) and its 95%
  interval: the human figure over every graded case, the judge's figure over all of them
  corrected by its error on the labelled ones (calibration.estimates.prediction_powered);
- `judge_only`: the judge's own figure over every graded case (Wilson or normal interval);
- `human_only`: the labelled cases alone (the classical estimate);
- `corrected` (pass rate): the Rogan-Gladen corrected pass rate with its interval.

Every number is flat under dotted names, so `--fail-if "ppi.pass_rate.ci95_low < 0.8"`
gates on it (`estimate_metric_names` lists them before the run). The statistics are
calibration's; this module picks the rubric's labels and scores and reshapes the result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.estimates.prediction_powered import prediction_powered_summary
from calibration.io.labels import ABSTAINED
from judge.engine.measure.human_labels import HumanLabels
from judge.rubric import Rubric

__all__ = ["add_estimates", "estimate_metric_names", "human_estimates"]

QUANTITIES = ("pass_rate", "mean_score", "mean_label")
# The flat names of one quantity's block (see the module docstring).
MAIN = ("estimate", "ci95_low", "ci95_high", "std_error", "lambda", "effective_labels")
SIDES = {
    "judge_only": ("estimate", "ci95_low", "ci95_high", "n"),
    "human_only": ("estimate", "ci95_low", "ci95_high", "n"),
}
CORRECTED = ("estimate", "ci95_low", "ci95_high")
COUNTS = ("judged", "labelled", "unlabelled", "human_only", "excluded_records", "excluded_human")


def rubric_scale(rubric: Rubric) -> tuple[list[str], str | None, dict[str, float | None]]:
    """The rubric's labels, its pass label (of a rubric with two labels, `abstained`
    aside: the kind's pass label, `Kind.pass_label`, the one calibrate and drift count
    too; None otherwise) and the score each label stands for."""
    choices = rubric.behaviour.choices(rubric)
    names = [c.name for c in choices]
    scores = {c.name: c.score for c in choices}
    two = [c for c in choices if c.name != ABSTAINED]
    positive = rubric.behaviour.pass_label(rubric) if len(two) == 2 else None
    return names, positive, scores


def _quantities(rubric: Rubric) -> list[str]:
    names, positive, _ = rubric_scale(rubric)
    out = ["pass_rate"] if positive is not None else []
    out.append("mean_score")
    numeric = [n for n in names if n != ABSTAINED]
    if numeric and all(_is_number(n) for n in numeric):
        out.append("mean_label")
    return out


def estimate_metric_names(rubric: Rubric) -> set[str]:
    """The `ppi.*` names `--fail-if` accepts for this rubric (those a summary can hold)."""
    names = {f"ppi.counts.{c}" for c in COUNTS}
    for quantity in _quantities(rubric):
        names |= {f"ppi.{quantity}.{n}" for n in (*MAIN, "n_labelled", "n_unlabelled")}
        for side, fields in SIDES.items():
            names |= {f"ppi.{quantity}.{side}.{n}" for n in fields}
        if quantity == "pass_rate":
            names |= {f"ppi.{quantity}.corrected.{n}" for n in CORRECTED}
    return names


def human_estimates(
    records: Iterable[Mapping[str, Any]], rubric: Rubric, labels: HumanLabels
) -> dict[str, Any]:
    """The `ppi` block of the summary and each slice's, from the final records.

    Returns `{"ppi": {...}, "by_slice": {name: {...}}}`. Input that leaves nothing to
    estimate (no labelled id among the records graded, e.g. with `--sample`) gives a block
    with the `reason` and no figures: gates on them then fail as undefined.
    """
    names, positive, scores = rubric_scale(rubric)
    source = f"rubric {rubric.id}@{rubric.version}: the label it scores 1.0"
    if labels.positive_label is not None:
        positive, source = labels.positive_label, "--positive-label"
    try:
        full = prediction_powered_summary(
            records,
            labels.rows(),
            positive_label=positive,
            weights=labels.weights(),
            label_scores=scores,
            labels=names or None,
        )
    except CalibrationInputError as exc:
        return {"ppi": {"labels": labels.source, "reason": exc.reason}, "by_slice": {}}
    keep = _quantities(rubric)
    head = {
        "labels": labels.source,
        "method": full["method"],
        "weighted": full["weighted"],
        "counts": _counts(full["counts"]),
    }
    if full["positive_label"] is not None:  # a name, never a figure to gate on
        head["positive_label"] = full["positive_label"]
        head["positive_from"] = source
    overall = {k: v for k, v in _blocks(full["overall"], keep).items() if k in keep}
    return {
        "ppi": head | overall,
        "by_slice": {name: _blocks(block, keep) for name, block in full["by_slice"].items()},
    }


def add_estimates(
    summary: dict[str, Any],
    records: Iterable[Mapping[str, Any]],
    rubric: Rubric,
    labels: HumanLabels,
) -> dict[str, Any]:
    """The summary with `ppi` added, overall and in each slice it has."""
    found = human_estimates(records, rubric, labels)
    out = {**summary, "ppi": found["ppi"]}
    out["by_slice"] = {
        name: {**stats, "ppi": found["by_slice"][name]} if name in found["by_slice"] else stats
        for name, stats in summary.get("by_slice", {}).items()
    }
    return out


def _counts(counts: Mapping[str, Any]) -> dict[str, int]:
    out = {k: int(counts[k]) for k in ("judged", "labelled", "unlabelled", "human_only")}
    out["excluded_records"] = sum(counts["excluded_records"].values())
    out["excluded_human"] = sum(counts["excluded_human"].values())
    return out


def _blocks(block: Mapping[str, Any], keep: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"judged": block["judged"], "labelled": block["labelled"]}
    for quantity in keep:
        if quantity in block:
            out[quantity] = _quantity(block[quantity])
    return out


def _quantity(q: Mapping[str, Any]) -> dict[str, Any]:
    """One quantity, flat: PPI++ on top, the other estimates beside it."""
    ppi = q.get("ppi") or {}
    out: dict[str, Any] = {
        "estimate": _num(ppi.get("estimate")),
        **_bounds(ppi.get("ci95")),
        "std_error": _num(ppi.get("std_error")),
        "lambda": _num(ppi.get("lambda")),
        "effective_labels": _num(ppi.get("effective_labels")),
        "n_labelled": q["n_labelled"],
        "n_unlabelled": q["n_unlabelled"],
    }
    for side in SIDES:
        if side in q:
            body = q[side]
            n = body.get("n", body.get("n_labelled"))
            out[side] = {"estimate": _num(body.get("estimate")), **_bounds(body.get("ci95"))}
            out[side]["n"] = n
    if "corrected" in q:
        body = q["corrected"]
        out["corrected"] = {"estimate": _num(body.get("estimate")), **_bounds(body.get("ci95"))}
        if body.get("reason"):
            out["corrected"]["reason"] = body["reason"]
    if q.get("reason"):
        out["reason"] = q["reason"]
    if q.get(
        "note"
    ):  # under 30 labels: every interval is rough (calibration.agreement.small_sample)
        out["note"] = q["note"]
    if ppi.get("interval_note"):
        out["interval_note"] = ppi["interval_note"]
    return out


def _bounds(ci: Any) -> dict[str, float | None]:
    if not isinstance(ci, list | tuple) or len(ci) != 2:
        return {"ci95_low": None, "ci95_high": None}
    return {"ci95_low": _num(ci[0]), "ci95_high": _num(ci[1])}


def _num(value: Any) -> float | None:
    """A finite float or None: summaries are strict JSON (an undefined figure is null)."""
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
