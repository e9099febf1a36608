"""Pass rate and mean score of a graded set, estimated with the judge's help (PPI++).

A judge graded every case; people labelled some of them. For the pass rate (two classes,
the pass class chosen as everywhere in calibration) and for the mean score, overall and
for each slice, :func:`prediction_powered_summary` reports side by side:

- ``judge_only``: the judge's own figure over every judged case. Precise, but it carries
  the judge's errors: it describes the judge, not the answers.
- ``human_only``: the classical figure from the labelled cases alone. Unbiased, wide.
- ``ppi``: the PPI++ estimate (:mod:`calibration.estimates.ppi`): the judge on every case, its
  bias measured and removed on the labelled ones; unbiased, and narrower than
  ``human_only`` as far as the judge tracks people (``effective_labels`` says by how much:
  the labelled cases the classical estimate would need for the same precision).
- ``corrected`` (pass rate): the Rogan-Gladen correction of :mod:`calibration.estimates.rates`.

Labelled and unlabelled cases are told apart by id. Without weights the labelled cases
are taken to be a simple random sample of the judged ones; with ``weights`` (``1/πᵢ``,
``πᵢ`` the chance a case had of being chosen for labelling) a stratified or otherwise
unequal sample is reweighted (:func:`calibration.estimates.ppi.ppi_mean_sampled`).

Cases either side marked ``abstained`` are not pass/fail cases and leave the pass rate,
as in :mod:`calibration.estimates.binary`; records whose status is not ``ok`` are left out and
counted. Scores: the judge's ``score`` against the human rows' ``score`` field when they
have one (else, with ``label_scores``, the score the human label stands for); labels that
are numbers on both sides (relevance 1-5) give ``mean_label``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from calibration.agreement.annotators import consolidate_annotators
from calibration.agreement.small_sample import small_sample_note
from calibration.errors import CalibrationInputError
from calibration.estimates._judged_cases import Cases, Sample, slice_names, unify_cases
from calibration.estimates.binary import binary_rates
from calibration.estimates.ppi import MeanEstimate, classical_mean, ppi_mean, ppi_mean_sampled
from calibration.estimates.ppi_intervals import (
    UNIT,
    Scale,
    clip,
    guarded,
    labelled_interval,
    posterior_ppi_interval,
    scale_of,
    scale_points,
    spread_is_known,
    student_interval,
    uses_prior,
)
from calibration.inference.intervals import wilson_interval
from calibration.io.classes import choose_positive, order_labels, pass_fail_classes
from calibration.io.labels import ABSTAINED, LabelSet, as_number, labels_from_rows, normalise_label
from calibration.io.rows import read_rows
from calibration.io.vocabulary import check_human_file

__all__ = ["prediction_powered_files", "prediction_powered_summary"]

METHOD = (
    "PPI++ (Angelopoulos, Duchi and Zrnic 2023): judge mean over the unlabelled cases plus "
    "its mean error on the labelled ones, power-tuned; interval: each estimate's "
    "interval_method (a Dirichlet posterior of the labelled errors with Student's t)"
)
PRIOR_METHOD = (
    "Student t (n - 1 degrees of freedom) around the posterior mean and standard deviation "
    "of the scale's mean under a Dirichlet prior of weight 1 spread over the scale's points "
    "(Perks 1947); widened to the bounded-scale score interval only when the labels do not "
    "vary"
)
STUDENT_METHOD = (
    "Student t interval (n - 1 degrees of freedom) of a mean with its own spread, widened "
    "to the bounded-scale score interval only when the labels do not vary"
)
POSTERIOR_PPI_METHOD = (
    "PPI++ estimate; interval: Student t (n - 1 degrees of freedom) around the judge's "
    "imputed mean plus the posterior mean of its error under a Dirichlet prior over the "
    "scale's (human, judge) pairs (Jeffreys 1/2 a cell for 0/1 values, else weight 1), "
    "with that posterior's variance"
)
WILSON_METHOD = "Wilson score interval of the share of 1s (every value is 0 or 1)"
WEIGHTED_METHOD = (
    "PPI++ for an unequal-probability labelling sample: judge mean over every case plus "
    "its mean error on the labelled ones weighted by 1/inclusion probability (Hajek form "
    "of Horvitz-Thompson), power-tuned; Hansen-Hurwitz variance"
)


def prediction_powered_summary(
    records: Iterable[Mapping[str, Any]],
    human_labels: Iterable[Mapping[str, Any]],
    *,
    positive_label: str | None = None,
    weights: Mapping[str, float] | None = None,
    confidence: float = 0.95,
    score_field: str = "score",
    label_scores: Mapping[str, float | None] | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """PPI++, judge-only, human-only and corrected estimates, overall and by slice.

    ``records``: the judge's graded records (or any rows with ``id`` and ``label``, and
    ``score`` and ``slices`` when they have them), one per judged case. ``human_labels``:
    rows with ``id`` and ``label`` (and ``score``, ``annotator`` when they have them) for
    some of those cases. ``positive_label``: the pass class of two (chosen as calibration
    chooses it when not given). ``weights``: ``id -> 1/inclusion probability`` for every
    labelled id when the labelled cases are not a simple random sample of the records.
    ``label_scores``: the score each label stands for (``faithful`` 1, ``unfaithful`` 0),
    the human score of a row without a ``score_field`` of its own. ``labels``: the scale's
    labels when known (a rubric's): they, not the labels seen, decide whether there is a
    pass rate (two classes, ``abstained`` aside) or a mean label (numbers).

    Raises :class:`CalibrationInputError` on input that cannot be compared: no labelled id
    among the records, no label in common, records given as the human labels, a labelled
    id without a weight. The result is plain JSON apart from ``nan`` (``null`` once
    written by :func:`calibration.io.jsonout.to_strict_json`); the module docstring says how
    to read each figure.
    """
    judge = labels_from_rows(records, source="records")
    human = labels_from_rows(human_labels, source="human labels")
    return _summary(
        judge, human, positive_label, weights, confidence, score_field, label_scores, labels
    )


def prediction_powered_files(
    records_path: str | Path,
    human_path: str | Path,
    *,
    positive_label: str | None = None,
    weights: Mapping[str, float] | None = None,
    confidence: float = 0.95,
    score_field: str = "score",
    label_scores: Mapping[str, float | None] | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """:func:`prediction_powered_summary` of two JSONL or CSV files."""
    judge = labels_from_rows((row for _, row in read_rows(records_path)), source=str(records_path))
    human = labels_from_rows((row for _, row in read_rows(human_path)), source=str(human_path))
    return _summary(
        judge, human, positive_label, weights, confidence, score_field, label_scores, labels
    )


def _summary(
    judge: LabelSet,
    human: LabelSet,
    positive_label: str | None,
    weights: Mapping[str, float] | None,
    confidence: float,
    score_field: str,
    label_scores: Mapping[str, float | None] | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    check_human_file(human, judge.path)
    if judge.has_annotators:
        raise CalibrationInputError("the records have an annotator column", path=judge.path)
    human = consolidate_annotators(human)
    cases = unify_cases(judge, human, score_field, label_scores).with_weights(weights, human.path)
    explicit = [cases.respell(normalise_label(v)) for v in labels] if labels else None
    classes = pass_fail_classes(order_labels(cases.labels(), explicit=explicit))
    positive = _positive(cases, classes, positive_label, judge.path)
    declared = _numeric_scale(explicit)
    by_slice = {
        name: _block(cases.take(members), classes, positive, confidence, declared)
        for name, members in slice_names(cases).items()
    }
    return {
        "method": WEIGHTED_METHOD if weights is not None else METHOD,
        "confidence": confidence,
        "positive_label": positive,
        "weighted": weights is not None,
        "counts": {
            "judged": len(cases.ids),
            "labelled": cases.n_labelled,
            "unlabelled": len(cases.ids) - cases.n_labelled,
            "human_only": len(cases.human_only),
            "human_only_ids": cases.human_only,
            "excluded_records": {k: len(v) for k, v in judge.excluded.items()},
            "excluded_human": {k: len(v) for k, v in human.excluded.items()},
        },
        "overall": _block(cases, classes, positive, confidence, declared),
        "by_slice": by_slice,
    }


def _positive(
    cases: Cases, classes: list[str] | None, explicit: str | None, path: str
) -> str | None:
    if classes is None:
        if explicit is not None:
            raise CalibrationInputError(
                f"positive label {explicit!r} given but the labels are not two classes "
                f"({sorted(set(cases.labels()))})",
                path=path,
            )
        return None
    chosen = cases.respell(explicit) if explicit is not None else None
    if chosen is not None and chosen not in classes:
        raise CalibrationInputError(
            f"positive label {explicit!r} is not one of {classes}", path=path
        )
    return choose_positive(classes, chosen)


def _numeric_scale(labels: Sequence[str] | None) -> list[float] | None:
    """The numbers a rubric's labels are (relevance 1..5), ``abstained`` aside; else ``None``."""
    values = [as_number(v) for v in labels or () if v != ABSTAINED]
    numbers = [v for v in values if v is not None]
    return numbers if numbers and len(numbers) == len(values) else None


def _block(
    cases: Cases,
    classes: list[str] | None,
    positive: str | None,
    confidence: float,
    declared: Sequence[float] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"judged": len(cases.ids), "labelled": cases.n_labelled}
    if classes is not None and positive is not None:
        out["pass_rate"] = _estimates(cases.pass_fail(classes, positive), confidence, rate=True)
        out["pass_rate"]["corrected"] = _corrected(cases, classes, positive)
    scores = cases.scores()
    if scores is not None:
        out["mean_score"] = _estimates(scores, confidence, rate=False)
    numeric = cases.numeric_labels() if classes is None else None
    if numeric is not None:
        out["mean_label"] = _estimates(numeric, confidence, rate=False, declared=declared)
    return out


def _corrected(cases: Cases, classes: list[str], positive: str) -> dict[str, Any]:
    """The Rogan-Gladen corrected pass rate of :mod:`calibration.estimates.binary`."""
    labelled = [(h, j) for h, j in zip(cases.human, cases.judge, strict=True) if h is not None]
    rates = binary_rates(
        [h for h, _ in labelled],
        [j for _, j in labelled],
        order=classes,
        judge_unlabelled=[j for h, j in zip(cases.human, cases.judge, strict=True) if h is None],
        positive_label=positive,
    )
    assert rates is not None  # two classes
    return {
        "estimate": rates["corrected_pass_rate"],
        "ci95": rates["corrected_pass_rate_ci95"],
        "reason": rates["corrected_pass_rate_reason"],
    }


def _interval(est: MeanEstimate, scale: Scale | None) -> dict[str, Any]:
    body = est.as_dict()
    body["ci95"] = list(c) if (c := clip(est.ci, scale)) is not None else None
    return body


def _estimates(
    sample: Sample, confidence: float, *, rate: bool, declared: Sequence[float] | None = None
) -> dict[str, Any]:
    """Judge-only, human-only and PPI++ figures of one quantity, every interval on the
    quantity's scale and none narrower than the labels allow (:mod:`calibration.estimates.ppi_intervals`)."""
    labelled, f = sample.labelled, sample.f
    yl, fl, fu = sample.y[labelled], f[labelled], f[~labelled]
    scale = UNIT if rate else scale_of(yl, f, declared=declared)
    out: dict[str, Any] = {"n_labelled": len(yl), "n_unlabelled": len(fu)}
    out["judge_only"] = _plain(f, confidence, rate, scale, declared)
    if len(yl) == 0:
        out["reason"] = "no labelled case: only the judge's own figure"
        return out
    own = labelled_interval(yl, scale, confidence, rate=rate, declared=declared)
    student = not rate and uses_prior(yl, scale, declared)
    if sample.weights is None:
        out["human_only"] = _plain(yl, confidence, rate, scale, declared)
        ppi = ppi_mean(yl, fl, fu, confidence=confidence)
        classical = classical_mean(yl, confidence=confidence)
    else:
        d = sample.weights[labelled]
        ppi = ppi_mean_sampled(yl, fl, f, d, confidence=confidence)
        classical = ppi_mean_sampled(yl, fl, f, d, lam=0.0, confidence=confidence)
        out["human_only"] = _interval(classical, scale)
    out["ppi"] = _interval(ppi, scale)
    if sample.weights is None and len(fu) == 0:
        # Every case labelled: nothing to impute, PPI++ is the human-only estimate.
        out["ppi"]["ci95"] = out["human_only"]["ci95"]
        out["ppi"]["interval_note"] = "every case labelled: the human-only interval"
    else:
        ci, note, method = _ppi_interval(sample, ppi, own, scale, declared, confidence, student)
        out["ppi"]["ci95"] = list(ci) if ci is not None else None
        if method:
            out["ppi"]["interval_method"] = method
        if note:
            out["ppi"]["interval_note"] = note
    if ppi.std_error > 0 and np.isfinite(classical.std_error):
        out["ppi"]["effective_labels"] = len(yl) * (classical.std_error / ppi.std_error) ** 2
    if len(yl) < 2:
        out["reason"] = "one labelled case: no interval"
    note = small_sample_note(len(yl))
    if note:
        out["note"] = note
    return out


def _ppi_interval(
    sample: Sample,
    ppi: MeanEstimate,
    own: tuple[float, float] | None,
    scale: Scale | None,
    declared: Sequence[float] | None,
    confidence: float,
    student: bool,
) -> tuple[tuple[float, float] | None, str | None, str | None]:
    """``(interval, note, method)`` of PPI++ with unlabelled cases. A simple random sample
    on a known scale: :func:`calibration.estimates.ppi_intervals.posterior_ppi_interval`,
    at every n; for 0/1 values under 30 labels it is also widened to the labels' Wilson
    interval (:func:`guarded`), while a mean of more than two points stands alone (hulled
    with the labels' own interval it was 1.7x its real spread at 18 labels). A weighted
    sample: the normal interval (Student's for a mean with its own spread), guarded."""
    labelled, n = sample.labelled, int(sample.labelled.sum())
    yl, fl = sample.y[labelled], sample.f[labelled]
    if sample.weights is None and scale is not None and ppi.lam is not None:
        points = scale_points(scale, declared)
        posterior = posterior_ppi_interval(
            yl, fl, sample.f[~labelled], ppi.lam, points, confidence=confidence
        )
        if posterior is not None:
            if student:
                return clip(posterior, scale), None, POSTERIOR_PPI_METHOD
            ci, note = guarded(posterior, own, n, scale)
            return ci, note, POSTERIOR_PPI_METHOD
    normal, method = ppi.ci, None
    if student:  # a mean with its own spread: Student's quantile, not the normal one
        normal = student_interval(ppi.estimate, ppi.std_error, n, confidence=confidence)
        method = STUDENT_METHOD
    ci, note = guarded(normal, own, n, scale)
    return ci, note, method


def _plain(
    values: np.ndarray,
    confidence: float,
    rate: bool,
    scale: Scale | None,
    declared: Sequence[float] | None = None,
) -> dict[str, Any]:
    """A mean with a Wilson interval (rates), the prior-weighted Student interval for a
    mean on a scale of more than two points or of values between its ends
    (:func:`calibration.estimates.ppi_intervals.prior_mean_interval`), else a normal one
    widened as :func:`calibration.estimates.ppi_intervals.guarded` says; each on the scale."""
    if len(values) == 0:
        return {"estimate": float("nan"), "ci95": None, "n": 0}
    if rate:
        hits = int(values.sum())
        ci = wilson_interval(hits, len(values), confidence=confidence)
        return {"estimate": hits / len(values), "ci95": list(ci), "n": len(values)}
    est = classical_mean(values, confidence=confidence)
    own = labelled_interval(values, scale, confidence, rate=False, declared=declared)
    student = uses_prior(values, scale, declared) and len(values) >= 2
    binary = scale is not None and not student and spread_is_known(values, scale)
    if student:  # its own interval, never degenerate (the prior's label has spread)
        guarded_ci, note = clip(own, scale), None
    elif binary and own is not None:  # 0/1 values: Wilson's interval at every n, never Wald's
        guarded_ci, note = own, None
    elif est.ci is None:  # one value: no spread to estimate, the score interval alone
        guarded_ci, note = own, (None if own is None else "one value: the score interval")
    else:
        guarded_ci, note = guarded(est.ci, own, len(values), scale)
    body: dict[str, Any] = {
        "estimate": est.estimate,
        "ci95": list(guarded_ci) if guarded_ci else None,
        "n": len(values),
    }
    if student:
        body["interval_method"] = PRIOR_METHOD
    elif binary and own is not None:
        body["interval_method"] = WILSON_METHOD
    if note:
        body["interval_note"] = note
    return body
