"""From two label files to checked, paired labels in one vocabulary, ready for analysis.

Reads both files, refuses what cannot be compared (a graded records file as the human
side, no id in common, no label in common, scores against text without a threshold),
consolidates several annotators, turns scores into classes by a threshold, and spells
both sides' labels one way (:mod:`calibration.io.vocabulary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from calibration.agreement.annotators import consolidate_annotators, inter_annotator_agreement
from calibration.agreement.metrics import Weights
from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.classes import order_labels
from calibration.io.columnar import SameFields, read_label_columns
from calibration.io.labels import (
    NO_FIELDS,
    JoinedLabels,
    LabelSet,
    join_labels,
    normalise_label,
    read_labels,
    row_number_hint,
)
from calibration.io.vocabulary import Vocabulary, check_human_file, label_key, respell, unify_labels
from calibration.pairs.analysis import AnalysisOptions, scale_of
from calibration.pairs.split import Split, split_cases
from calibration.pairs.threshold import apply_threshold, cut_scores

__all__ = ["Pairs", "Prepared", "Settings", "prepare"]


@dataclass(frozen=True)
class Settings:
    """Every choice that changes the statistics (not where files go)."""

    judge_field: str = "label"
    human_field: str = "label"
    weights: Weights = None
    group_field: str | None = None
    slice_field: str | None = None
    threshold: float | None = None
    fit_threshold: bool = False
    labels: tuple[str, ...] | None = None
    positive_label: str | None = None
    n_bootstrap: int = DEFAULT_RESAMPLES
    seed: int = 0
    test_fraction: float | None = None  # hold out this share of the labelled cases


@dataclass(frozen=True)
class Pairs:
    """Labelled cases: id, human label, judge label and the other fields of each."""

    ids: list[str]
    human: list[Any]
    judge: list[Any]
    fields: list[dict[str, Any]]

    def take(self, index: Sequence[int]) -> Pairs:
        return Pairs(
            [self.ids[i] for i in index],
            [self.human[i] for i in index],
            [self.judge[i] for i in index],
            [self.fields[i] for i in index],
        )


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare` hands the analysis, and what it found on the way."""

    judge: LabelSet
    human: LabelSet
    joined: JoinedLabels
    inter_annotator: dict[str, Any] | None
    pairs: Pairs
    unlabelled: list[Any]  # the judge's labels of the judge-only cases
    threshold: dict[str, Any] | None
    vocabulary: Vocabulary | None
    order: list[str] | None
    options: AnalysisOptions
    split: Split | None = None


def _read_columns(judge_path: str | Path, human_path: str | Path, s: Settings):
    """`_read` by the engine (:mod:`calibration.io.columnar`) for two plain label files
    (CSV, or JSONL such as the judge's graded records: those whose status is not ok are
    excluded and counted, as the row reader does), or None (then `_read` reads the rows)."""
    columns = read_label_columns(
        judge_path, human_path, judge_field=s.judge_field, human_field=s.human_field
    )
    if columns is None or not columns.ids:
        return None
    judge = LabelSet(str(judge_path), s.judge_field, [], excluded=columns.judge_excluded)
    human = LabelSet(str(human_path), s.human_field, [], excluded=columns.human_excluded)
    joined = JoinedLabels(
        ids=columns.ids,  # type: ignore[arg-type]  # a Sequence[str], packed
        human=columns.human,
        judge=columns.judge,
        fields=SameFields(len(columns.ids), NO_FIELDS),  # type: ignore[arg-type]
        judge_only=columns.judge_only,
        human_only=columns.human_only,
        judge_only_values=columns.judge_only_values,
        judge_only_fields=[NO_FIELDS] * len(columns.judge_only),
    )
    return judge, human, joined, None


def _columnar(s: Settings) -> bool:
    """Whether the settings need nothing but the labels of each pair (no fields, no
    per-pair threshold or split), so the engine may read the files as columns."""
    return (
        s.group_field is None
        and s.slice_field is None
        and s.threshold is None
        and not s.fit_threshold
        and s.test_fraction is None
    )


def _read(judge_path: str | Path, human_path: str | Path, s: Settings):
    judge = read_labels(judge_path, field=s.judge_field)
    human = read_labels(human_path, field=s.human_field)
    check_human_file(human, judge.path)
    if judge.has_annotators:
        raise CalibrationInputError("the judge file has an annotator column", path=judge.path)
    inter = None
    if human.has_annotators:
        inter = inter_annotator_agreement(
            human, weights=s.weights, n_bootstrap=s.n_bootstrap, seed=s.seed
        )
    human = consolidate_annotators(human)
    if inter is not None:
        # Nothing dropped: the ids a rule settled (a tied majority...) are counted and listed.
        inter["adjudicated"] = {rule: len(ids) for rule, ids in human.adjudicated.items()}
        inter["adjudicated_ids"] = human.adjudicated
    judge.check_not_all_excluded()
    joined = join_labels(judge, human)
    if not joined.ids:
        raise CalibrationInputError(
            f"no id in common with {human.path} ({len(judge.records)} judge ids, "
            f"{len(human.records)} human ids){row_number_hint(judge, human)}",
            path=judge.path,
        )
    return judge, human, joined, inter


def _cut(joined: JoinedLabels, fit_on: Sequence[int], s: Settings, source: str):
    """Judge labels of the pairs and of the judge-only cases, by threshold if one applies;
    a fitted threshold is fitted on the pairs ``fit_on`` only."""
    if s.threshold is None and not s.fit_threshold:
        return list(joined.judge), list(joined.judge_only_values), None
    _, info = apply_threshold(
        [joined.ids[i] for i in fit_on],
        [joined.human[i] for i in fit_on],
        [joined.judge[i] for i in fit_on],
        threshold=s.threshold,
        fit=s.fit_threshold,
        positive_label=s.positive_label,
        labels=s.labels,
        source=source,
    )
    judged = cut_scores(joined.ids, joined.judge, info, source=source)
    unlabelled = cut_scores(joined.judge_only, joined.judge_only_values, info, source=source)
    return judged, unlabelled, info


def _check_scales(human: Sequence[Any], judge: Sequence[Any], path: str) -> None:
    sides = {scale_of(human, human), scale_of(judge, judge)}
    if sides == {"continuous", "categorical"}:
        raise CalibrationInputError(
            "one side gives numeric scores and the other text labels: "
            "use --threshold T (or --fit-threshold) to turn scores into pass/fail",
            path=path,
        )


def _label_order(human, judge, options: AnalysisOptions, path: str) -> list[str]:
    seen = [normalise_label(v) for v in [*human, *judge]]
    order = order_labels(seen, explicit=options.labels)
    unknown = sorted(set(seen) - set(order))
    if unknown:
        raise CalibrationInputError(f"labels {unknown} are not in --labels {order}", path=path)
    if options.positive_label is not None and options.positive_label not in order:
        raise CalibrationInputError(
            f"--positive-label {options.positive_label!r} is not a label: {order}", path=path
        )
    return order


def _own(values: Sequence[Any]) -> Any:
    # a list is copied (the pairs own theirs); a packed column is immutable, so shared
    return list(values) if isinstance(values, list) else values


def _split(joined: JoinedLabels, s: Settings) -> Split | None:
    if s.test_fraction is None:
        return None
    continuous = scale_of(joined.human, joined.human) == "continuous"
    strata = None if continuous else [label_key(normalise_label(v)) for v in joined.human]
    return split_cases(strata, len(joined.ids), test_fraction=s.test_fraction, seed=s.seed)


def prepare(
    judge_path: str | Path, human_path: str | Path, settings: Settings, *, columnar: bool = True
) -> Prepared:
    """Read, check, join, split, cut and spell both label files (see the module docstring).

    Two plain label files are read as columns by the engine (:mod:`calibration.io.columnar`:
    10 million pairs within 2 GB) unless ``columnar`` is False (a caller that needs each
    pair's other fields) or the settings need more than the labels; the result is the same.

    With ``settings.test_fraction`` the labelled pairs are split (stratified by human
    label) and a fitted threshold is fitted on the development split only.
    """
    read = (
        _read_columns(judge_path, human_path, settings)
        if columnar and _columnar(settings)
        else None
    )
    judge, human, joined, inter = read or _read(judge_path, human_path, settings)
    split = _split(joined, settings)
    fit = range(len(joined.ids)) if split is None else split.dev
    judged, unlabelled, threshold = _cut(joined, fit, settings, judge.path)
    if threshold is not None and split is not None:
        threshold = {**threshold, "fitted_on": "dev split", "in_sample": False}
    _check_scales(joined.human, judged, judge.path)
    options = AnalysisOptions(
        weights=settings.weights,
        labels=settings.labels,
        positive_label=settings.positive_label,
        n_bootstrap=settings.n_bootstrap,
        seed=settings.seed,
    )
    human_values: list[Any] = list(joined.human)
    vocabulary = order = None
    if scale_of(human_values, judged) != "continuous":
        human_values, judged, unlabelled, vocabulary = unify_labels(
            human_values, judged, unlabelled, judge_path=judge.path, human_path=human.path
        )
        options = _respelled(options, settings, vocabulary)
        order = _label_order(human_values, judged, options, judge.path)
    pairs = Pairs(_own(joined.ids), human_values, judged, _own(joined.fields))
    return Prepared(
        judge, human, joined, inter, pairs, unlabelled, threshold, vocabulary, order, options, split
    )


def _respelled(options: AnalysisOptions, s: Settings, vocabulary: Vocabulary) -> AnalysisOptions:
    explicit = respell(s.labels, vocabulary)
    positive = respell([s.positive_label], vocabulary) if s.positive_label else None
    return replace(
        options,
        labels=tuple(explicit) if explicit else None,
        positive_label=positive[0] if positive else None,
    )
