"""Calibrate a judge's label file against a human one: the whole result in one dict.

``calibrate`` prepares the pairs (:mod:`calibration.pairs.prepare`), analyses them
(:mod:`calibration.pairs.analysis`), adds what was left out and why, readiness and, on request,
slices. ``write_report`` (:mod:`calibration.report.output`) writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from calibration.agreement.metrics import Weights
from calibration.decisions.held_out import held_out_section
from calibration.decisions.readiness import assess_readiness
from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.pairs.analysis import analyse, scale_of
from calibration.pairs.covariates import read_cases
from calibration.pairs.explain import errors_by_covariate
from calibration.pairs.prepare import Pairs, Prepared, Settings, prepare
from calibration.report.output import write_report

__all__ = ["calibrate", "write_report"]

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
    n_bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    test_fraction: float | None = None,
    cases: str | Path | None = None,
    explain: bool = False,
) -> dict[str, Any]:
    """Read both label files, join them on ``id`` and compute every statistic that applies.

    Raises :class:`CalibrationInputError` on unusable input: no id in common, no label in
    common, a graded records file as the human side, a bad option. ``n_bootstrap = 0``
    computes no bootstrap intervals. The result follows DESIGN.md's calibration output;
    undefined values are ``nan`` here and ``null`` once written.

    ``test_fraction`` holds out that share of the labelled cases (stratified by human
    label, seeded by ``seed``): a fitted threshold is fitted on the rest (dev), the
    top-level figures and readiness are the test split's, and ``split`` puts dev and test
    side by side.

    ``explain`` adds ``errors_by_covariate`` (:mod:`calibration.pairs.explain`): which case
    features (from the ``cases`` file: answer length, contexts, slices) go with the
    judge's disagreements, over every labelled case.
    """
    if explain and cases is None:
        raise CalibrationInputError(
            "--explain needs --cases CASES: the cases file the answer length, contexts and "
            "slices are read from"
        )
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
        test_fraction=test_fraction,
    )
    prepared = prepare(judge_path, human_path, settings, columnar=cases is None)
    scope = _scopes(prepared)
    body = _analyse(prepared, scope["test"], group_field)
    result = _assemble(prepared, body)
    if prepared.split is not None:
        dev = _analyse(prepared, scope["dev"], group_field)
        result["split"] = held_out_section(prepared.split, prepared.pairs.ids, dev, result)
    if slice_field:
        result["slices"] = _slices(prepared, scope["test"], slice_field, group_field)
    if explain and cases is not None:
        result["errors_by_covariate"] = _explain(prepared, cases)
    result["settings"] = _settings(prepared, settings)
    if cases is not None:
        result["settings"]["cases_file"] = str(cases)
    return result


def _explain(prepared: Prepared, cases: str | Path) -> dict[str, Any]:
    pairs = prepared.pairs
    if scale_of(pairs.human, pairs.judge) == "continuous":
        note = "needs labels, not continuous scores (use --threshold T)"
        return {"covariates": None, "notes": [note], "summary": f"not estimated: {note}"}
    return errors_by_covariate(
        pairs.ids, pairs.human, pairs.judge, read_cases(cases), extra=pairs.fields
    )


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


@dataclass(frozen=True)
class Scope:
    """Labelled pairs to analyse, and the judge's labels of the judged cases whose human
    labels this analysis does not use (judge-only ids; with a split, the other split)."""

    pairs: Pairs
    unlabelled: list[Any]
    unlabelled_fields: list[dict[str, Any]]


def _scopes(prepared: Prepared) -> dict[str, Scope]:
    """``test`` (every pair without a split) and, with one, ``dev``."""
    pairs, joined = prepared.pairs, prepared.joined
    split = prepared.split
    if split is None:
        return {"test": Scope(pairs, prepared.unlabelled, joined.judge_only_fields)}
    out = {}
    for name, mine, other in (("dev", split.dev, split.test), ("test", split.test, split.dev)):
        hidden = pairs.take(other)
        out[name] = Scope(
            pairs.take(mine),
            [*prepared.unlabelled, *hidden.judge],
            [*joined.judge_only_fields, *hidden.fields],
        )
    return out


def _analyse(prepared: Prepared, scope: Scope, group_field: str | None) -> dict[str, Any]:
    pairs = scope.pairs
    return analyse(
        pairs.ids,
        pairs.human,
        pairs.judge,
        options=prepared.options,
        groups=_field_values(pairs, group_field) if group_field else None,
        order=prepared.order,
        judge_unlabelled=scope.unlabelled,
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


def _slices(
    prepared: Prepared, scope: Scope, field: str, group_field: str | None
) -> dict[str, Any]:
    members = _members(scope.pairs.fields, field)
    extra = _members(scope.unlabelled_fields, field)
    out: dict[str, Any] = {}
    for name, idx in sorted(members.items()):
        part = Scope(
            scope.pairs.take(idx),
            [scope.unlabelled[i] for i in extra.get(name, [])],
            [scope.unlabelled_fields[i] for i in extra.get(name, [])],
        )
        body = _analyse(prepared, part, group_field)
        body["disagreement_ids"] = [d["id"] for d in body.pop("disagreements")]
        body["readiness"], body["readiness_reasons"] = assess_readiness(body)
        out[name] = body
    return out
