"""Calibrate a judge's label file against a human one, and write the report.

``calibrate`` reads, joins and analyses; ``write_report`` writes ``calibration.json``
(strict JSON: undefined values are ``null``), ``report.md`` and ``confusion.png``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from calibration.analysis import AnalysisOptions, analyse, order_labels, scale_of
from calibration.annotators import consolidate_annotators, inter_annotator_agreement
from calibration.errors import CalibrationInputError
from calibration.labels import JoinedLabels, LabelSet, join_labels, normalise_label, read_labels
from calibration.metrics import Weights
from calibration.readiness import assess_readiness
from calibration.threshold import apply_threshold, cut_scores

__all__ = ["calibrate", "to_strict_json", "write_report"]

NO_SLICE = "(no slice)"


def calibrate(
    judge_path: str | Path,
    human_path: str | Path,
    *,
    judge_field: str = "label",
    human_field: str = "label",
    weights: Weights = None,
    group_field: str | None = None,
    slice_field: str | None = None,
    threshold: float | None = None,
    fit_threshold: bool = False,
    labels: Sequence[str] | None = None,
    positive_label: str | None = None,
    n_bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Read both label files, join them on ``id`` and compute every statistic that applies.

    Raises :class:`CalibrationInputError` on unusable input, including no id in common.
    The result follows DESIGN.md's calibration output; undefined values are ``nan`` here
    and ``null`` once written.
    """
    judge = read_labels(judge_path, field=judge_field)
    human = read_labels(human_path, field=human_field)
    if judge.has_annotators:
        raise CalibrationInputError("the judge file has an annotator column", path=judge.path)
    inter = inter_annotator_agreement(human, weights=weights) if human.has_annotators else None
    human = consolidate_annotators(human)
    joined = join_labels(judge, human)
    if not joined.ids:
        raise CalibrationInputError(
            f"no id in common with {human.path} ({len(judge.records)} judge ids, "
            f"{len(human.records)} human ids)",
            path=judge.path,
        )
    judge_values: list[Any] = list(joined.judge)
    unlabelled: list[Any] = list(joined.judge_only_values)
    threshold_info = None
    if threshold is not None or fit_threshold:
        judge_values, threshold_info = apply_threshold(
            joined.ids,
            joined.human,
            joined.judge,
            threshold=threshold,
            fit=fit_threshold,
            positive_label=positive_label,
            labels=labels,
            source=judge.path,
        )
        unlabelled = cut_scores(joined.judge_only, unlabelled, threshold_info, source=judge.path)
    _check_scales(joined.human, judge_values, judge.path)
    options = AnalysisOptions(
        weights=weights,
        labels=tuple(labels) if labels else None,
        positive_label=positive_label,
        n_bootstrap=n_bootstrap,
        seed=seed,
    )
    order = _label_order(joined.human, judge_values, options, judge.path)
    groups = _field_values(joined, group_field) if group_field else None
    body = analyse(
        joined.ids,
        joined.human,
        judge_values,
        options=options,
        groups=groups,
        order=order,
        judge_unlabelled=unlabelled,
    )
    result = _assemble(judge, human, joined, body, inter, threshold_info)
    if slice_field:
        result["slices"] = _slices(
            joined, judge_values, unlabelled, slice_field, options, order, group_field
        )
    result["settings"] = {
        "judge_file": judge.path,
        "human_file": human.path,
        "judge_field": judge_field,
        "human_field": human_field,
        "weights": weights,
        "group_field": group_field,
        "slice_field": slice_field,
        "bootstrap_resamples": n_bootstrap,
        "seed": seed,
    }
    return result


def _check_scales(human: Sequence[Any], judge: Sequence[Any], path: str) -> None:
    sides = {scale_of(human, human), scale_of(judge, judge)}
    if sides == {"continuous", "categorical"}:
        raise CalibrationInputError(
            "one side gives numeric scores and the other text labels: "
            "use --threshold T (or --fit-threshold) to turn scores into pass/fail",
            path=path,
        )


def _label_order(human, judge, options: AnalysisOptions, path: str) -> list[str] | None:
    if scale_of(human, judge) == "continuous":
        return None
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


def _field_values(joined: JoinedLabels, name: str) -> list[Any]:
    values = [fields.get(name) for fields in joined.fields]
    missing = [i for i, v in zip(joined.ids, values, strict=True) if v in (None, "")]
    if missing:
        raise CalibrationInputError(
            f"field {name!r} is missing for {len(missing)} ids, e.g. {missing[0]!r}"
        )
    return values


def _assemble(judge: LabelSet, human: LabelSet, joined: JoinedLabels, body, inter, threshold):
    result: dict[str, Any] = {
        "n": body.pop("n"),
        "unmatched": {
            "judge_only": len(joined.judge_only),
            "human_only": len(joined.human_only),
            "judge_only_ids": joined.judge_only,
            "human_only_ids": joined.human_only,
        },
        "excluded": {
            "judge": {k: len(v) for k, v in judge.excluded.items()},
            "human": {k: len(v) for k, v in human.excluded.items()},
            "judge_ids": judge.excluded,
            "human_ids": human.excluded,
        },
        **body,
        "inter_annotator": inter,
        "threshold": threshold,
    }
    result["readiness"], result["readiness_reasons"] = assess_readiness(result)
    return result


def _slice_members(value: Any) -> list[str]:
    if value in (None, ""):
        return [NO_SLICE]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _members(rows: Sequence[dict[str, Any]], field: str) -> dict[str, list[int]]:
    members: dict[str, list[int]] = {}
    for i, fields in enumerate(rows):
        for name in _slice_members(fields.get(field)):
            members.setdefault(name, []).append(i)
    return members


def _slices(
    joined: JoinedLabels,
    judge_values: list[Any],
    unlabelled: list[Any],
    field: str,
    options: AnalysisOptions,
    order: list[str] | None,
    group_field: str | None,
) -> dict[str, Any]:
    members = _members(joined.fields, field)
    extra = _members(joined.judge_only_fields, field)
    out: dict[str, Any] = {}
    for name, idx in sorted(members.items()):
        ids = [joined.ids[i] for i in idx]
        groups = [joined.fields[i].get(group_field) for i in idx] if group_field else None
        body = analyse(
            ids,
            [joined.human[i] for i in idx],
            [judge_values[i] for i in idx],
            options=options,
            groups=groups,
            order=order,
            judge_unlabelled=[unlabelled[i] for i in extra.get(name, [])],
        )
        body["disagreement_ids"] = [d["id"] for d in body.pop("disagreements")]
        body["readiness"], body["readiness_reasons"] = assess_readiness(body)
        out[name] = body
    return out


def to_strict_json(value: Any) -> Any:
    """The value with numpy types made plain and ``nan``/``inf`` made ``None``."""
    if isinstance(value, dict):
        return {str(k): to_strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_strict_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_report(result: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``calibration.json``, ``report.md`` and (with categories) ``confusion.png``."""
    from calibration.markdown import render_markdown
    from calibration.plot import plot_confusion

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    strict = to_strict_json(result)
    paths = [out / "calibration.json", out / "report.md"]
    paths[0].write_text(json.dumps(strict, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_markdown(strict), encoding="utf-8")
    matrix = strict.get("confusion_matrix")
    if matrix:
        paths.append(plot_confusion(matrix["labels"], matrix["matrix"], out / "confusion.png"))
    return paths
