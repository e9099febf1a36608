"""Calibrate a judge's label file against a human one: the whole result in one dict.

``calibrate`` prepares the pairs (:mod:`calibration.prepare`), analyses them
(:mod:`calibration.analysis`), adds what was left out and why, readiness and, on request,
slices. ``write_report`` (:mod:`calibration.output`) writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from calibration.analysis import analyse
from calibration.errors import CalibrationInputError
from calibration.metrics import Weights
from calibration.output import to_strict_json, write_report
from calibration.prepare import Pairs, Prepared, Settings, prepare
from calibration.readiness import assess_readiness

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

    Raises :class:`CalibrationInputError` on unusable input: no id in common, no label in
    common, a graded records file as the human side, a bad option. ``n_bootstrap = 0``
    computes no bootstrap intervals. The result follows DESIGN.md's calibration output;
    undefined values are ``nan`` here and ``null`` once written.
    """
    if n_bootstrap < 0:
        raise CalibrationInputError(f"n_bootstrap must be 0 (no intervals) or more: {n_bootstrap}")
    settings = Settings(
        judge_field=judge_field,
        human_field=human_field,
        weights=weights,
        group_field=group_field,
        slice_field=slice_field,
        threshold=threshold,
        fit_threshold=fit_threshold,
        labels=tuple(labels) if labels else None,
        positive_label=positive_label,
        n_bootstrap=n_bootstrap,
        seed=seed,
    )
    prepared = prepare(judge_path, human_path, settings)
    body = _analyse(prepared, prepared.pairs, prepared.unlabelled, group_field)
    result = _assemble(prepared, body)
    if slice_field:
        result["slices"] = _slices(prepared, slice_field, group_field)
    result["settings"] = _settings(prepared, settings)
    return result


def _settings(prepared: Prepared, settings: Settings) -> dict[str, Any]:
    chosen = asdict(settings)
    chosen["bootstrap_resamples"] = chosen.pop("n_bootstrap")
    chosen["labels"] = list(settings.labels) if settings.labels else None
    return {"judge_file": prepared.judge.path, "human_file": prepared.human.path, **chosen}


def _field_values(pairs: Pairs, name: str) -> list[Any]:
    values = [fields.get(name) for fields in pairs.fields]
    missing = [i for i, v in zip(pairs.ids, values, strict=True) if v in (None, "")]
    if missing:
        raise CalibrationInputError(
            f"field {name!r} is missing for {len(missing)} ids, e.g. {missing[0]!r}"
        )
    return values


def _analyse(
    prepared: Prepared, pairs: Pairs, unlabelled: Sequence[Any], group_field: str | None
) -> dict[str, Any]:
    return analyse(
        pairs.ids,
        pairs.human,
        pairs.judge,
        options=prepared.options,
        groups=_field_values(pairs, group_field) if group_field else None,
        order=prepared.order,
        judge_unlabelled=unlabelled,
    )


def _assemble(prepared: Prepared, body: dict[str, Any]) -> dict[str, Any]:
    judge, human, joined = prepared.judge, prepared.human, prepared.joined
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
        "vocabulary": prepared.vocabulary.as_dict() if prepared.vocabulary else None,
        "inter_annotator": prepared.inter_annotator,
        "threshold": prepared.threshold,
    }
    result["readiness"], result["readiness_reasons"] = assess_readiness(result)
    return result


def _slice_members(value: Any) -> list[str]:
    if value in (None, ""):
        return [NO_SLICE]
    return [str(v) for v in value] if isinstance(value, list) else [str(v) for v in [value]]


def _members(rows: Sequence[dict[str, Any]], field: str) -> dict[str, list[int]]:
    members: dict[str, list[int]] = {}
    for i, fields in enumerate(rows):
        for name in _slice_members(fields.get(field)):
            members.setdefault(name, []).append(i)
    return members


def _slices(prepared: Prepared, field: str, group_field: str | None) -> dict[str, Any]:
    members = _members(prepared.pairs.fields, field)
    extra = _members(prepared.joined.judge_only_fields, field)
    out: dict[str, Any] = {}
    for name, idx in sorted(members.items()):
        unlabelled = [prepared.unlabelled[i] for i in extra.get(name, [])]
        body = _analyse(prepared, prepared.pairs.take(idx), unlabelled, group_field)
        body["disagreement_ids"] = [d["id"] for d in body.pop("disagreements")]
        body["readiness"], body["readiness_reasons"] = assess_readiness(body)
        out[name] = body
    return out
