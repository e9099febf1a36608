"""Agreement with people over time: each window's figures, its change against a reference,
and the stream's alarm (:mod:`calibration.drift.alarm`).

Per window: ``n``; the agreement coefficient (Cohen's kappa for labels without an order,
linear weighted kappa for an ordinal scale of more than two levels) with the interval
``judge calibrate`` reports; Gwet's AC1 with its interval (the figure to read where one
label dominates and kappa's chance term swings); the judge's and the people's pass rates
with Wilson intervals (two-class labels). Every figure comes from
:func:`calibration.pairs.analysis.analyse`, so a window reads as a calibration of its own.

Against the reference (the first window with enough labels, a named window, a
calibration's confusion table, or, with ``past``, all the windows with enough labels before
this one, pooled, a reference of its own for each window): the difference
``Δ = A_w - A_r`` with the MOVER interval
built from the two coefficients' own intervals ``[l, u]``:
``[Δ - sqrt((A_w - l_w)² + (u_r - A_r)²), Δ + sqrt((u_w - A_w)² + (A_r - l_r)²)]``
(Zou and Donner (2008), Stat. Med. 27(10); Newcombe (1998) for proportions): it keeps the
asymmetry of each small-sample interval, where ``Δ ± z·se`` would not. Each window's
interval is at 95%, not corrected for the number of windows; the alarm is.

A window with fewer than ``min_labels`` pairs, or whose coefficient is undefined (labels
that do not vary), gets no verdict: it says how many labels it has and needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from calibration.agreement.small_sample import SMALL_SAMPLE
from calibration.drift.alarm import SIMULATIONS
from calibration.drift.null import Clusters
from calibration.drift.statistic import Statistic
from calibration.drift.verdict import family_summary, stream_alarms, stream_status
from calibration.drift.windows import Window
from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.classes import choose_positive, order_labels, pass_fail_classes
from calibration.pairs.analysis import AnalysisOptions, analyse, scale_of

__all__ = ["DriftOptions", "DriftSlice", "ReferenceTable", "drift_report", "sliced_drift_report"]


@dataclass(frozen=True)
class ReferenceTable:
    """A reference given as a confusion table (rows people, columns judge) and its labels."""

    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]
    source: str


@dataclass(frozen=True)
class DriftOptions:
    """Choices that change the figures and the alarm."""

    reference: str | ReferenceTable = "first"  # "first", "past", a window's name, or a table
    alpha: float = 0.05
    min_labels: int = SMALL_SAMPLE
    weights: Literal["linear", "quadratic"] = "linear"  # for ordinal scales only
    n_bootstrap: int = DEFAULT_RESAMPLES
    simulations: int = SIMULATIONS
    seed: int = 0
    statistic: Statistic = "disagreement"  # what the alarm scans
    positive_label: str | None = None  # the pass class of two (the rubric's); None: the rule


@dataclass(frozen=True)
class _Pairs:
    ids: list[str]
    human: list[str]
    judge: list[str]


@dataclass(frozen=True)
class DriftSlice:
    """One stream of a family watched under one alarm: its name (``None`` for a stream
    alone), its pairs in stream order, its windows and, where its pairs come in groups
    (a conversation's turns), each pair's group."""

    name: str | None
    ids: Sequence[str]
    human: Sequence[str]
    judge: Sequence[str]
    windows: Sequence[Window]
    groups: Sequence[str] | None = None


def drift_report(
    ids: Sequence[str],
    human: Sequence[str],
    judge: Sequence[str],
    windows: Sequence[Window],
    options: DriftOptions = DriftOptions(),
    groups: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Every window's figures, its change against the reference and the alarm, as a dict
    (strict JSON once ``calibration.io.jsonout.to_strict_json`` has run). Labels are text
    as :func:`calibration.io.labels.normalise_label` spells them. With ``groups`` (one a
    pair), the alarm's null resamples whole groups (:mod:`calibration.drift.null`)."""
    family = sliced_drift_report([DriftSlice(None, ids, human, judge, windows, groups)], options)
    return family["slices"][0]


def sliced_drift_report(slices: Sequence[DriftSlice], options: DriftOptions) -> dict[str, Any]:
    """Each slice's report (:func:`drift_report`) under one alarm: the threshold is the
    ``1 - alpha`` quantile of the largest scan over every window of every slice
    (:func:`calibration.drift.alarm.family_alarm`), so the chance that any slice alarms
    falsely is ``alpha``. The family's ``alarm`` and ``status`` say which slices fired."""
    extra = list(options.reference.labels) if isinstance(options.reference, ReferenceTable) else []
    labels = [v for s in slices for v in (*s.human, *s.judge)] + extra
    order = order_labels(labels, positive=options.positive_label)
    two = pass_fail_classes(order)
    positive = choose_positive(two, options.positive_label if options.positive_label in order
                               else None) if two else None  # fmt: skip
    coefficient, weights = _coefficient(order, options)
    analysis = AnalysisOptions(
        weights=weights, positive_label=positive, n_bootstrap=options.n_bootstrap,
        seed=options.seed,
    )  # fmt: skip
    prepared = [_prepare(s, order, analysis, coefficient, options) for s in slices]
    alarms = stream_alarms(prepared, order, weights, options)
    reports = []
    for one, ready, alarm in zip(slices, prepared, alarms, strict=True):
        report = ready["report"]
        report["reference"].pop("row", None)
        report.update(
            alarm=alarm, status=stream_status(report["windows"], alarm, options.min_labels)
        )
        reports.append({"slice": one.name, **report} if one.name is not None else report)
    return {"slices": reports, **family_summary(reports)}


def _prepare(stream: DriftSlice, order, analysis, coefficient, options) -> dict[str, Any]:
    """A slice's figures before the alarm: its windows' rows, its reference, what is
    tested and the pairs' cells and groups for a cluster-aware null."""
    pairs = _Pairs(list(stream.ids), list(stream.human), list(stream.judge))
    windows = stream.windows
    rows = [_window_row(w, pairs, order, analysis, coefficient, options) for w in windows]
    reference = _reference(rows, order, analysis, coefficient, options)
    tested = [r for r in rows if r["enough"] and r is not reference.get("row")]
    if reference["kind"] == "past":
        _against_the_past(rows, windows, pairs, order, analysis, coefficient)
    for row in tested:
        row["difference"], row["difference_ci95"] = _difference(row, row.get("past", reference))
    report = {
        "n": len(pairs.ids),
        "labels": order,
        "coefficient": coefficient,
        "weights": weights_of(coefficient, options),
        "min_labels": options.min_labels,
        "positive_label": analysis.positive_label,  # the class the pass-rate columns count
        "reference": reference,
        "windows": rows,
    }
    clusters = None
    if stream.groups is not None:
        clusters = _clusters(stream, rows, reference, tested, order)
    return {"report": report, "tested": tested, "clusters": clusters}


def weights_of(coefficient: str, options: DriftOptions):
    return options.weights if coefficient == "weighted_kappa" else None


def _clusters(stream: DriftSlice, rows, reference, tested, order) -> Clusters:
    """The cells and groups of the pairs the alarm reads, in stream order: the reference
    window's (when it is one of the stream's), then each tested window's."""
    assert stream.groups is not None
    chosen = {id(r) for r in tested}
    in_stream = reference.get("row") is not None
    if in_stream:
        chosen.add(id(reference["row"]))
    index = {label: i for i, label in enumerate(order)}
    k = len(order)
    positions = [i for w, r in zip(stream.windows, rows, strict=True) if id(r) in chosen
                 for i in w.positions]  # fmt: skip
    cells = [index[stream.human[i]] * k + index[stream.judge[i]] for i in positions]
    groups = [str(stream.groups[i]) for i in positions]
    return Clusters(np.asarray(cells, dtype=np.int64), np.asarray(groups), in_stream)


def _coefficient(order: list[str], options: DriftOptions):
    """Weighted kappa on an ordinal scale of more than two levels, else Cohen's kappa."""
    if scale_of(order, order) == "ordinal" and len(order) > 2:
        return "weighted_kappa", options.weights
    return "kappa", None


def _window_row(window, pairs, order, analysis, coefficient, options) -> dict[str, Any]:
    take = list(window.positions)
    row: dict[str, Any] = {"window": window.name, "start": window.start, "end": window.end}
    if len(take) < options.min_labels:  # no verdict for it: its intervals would not be read
        analysis = replace(analysis, n_bootstrap=0)
    row.update(_figures([pairs.ids[i] for i in take], [pairs.human[i] for i in take],
                        [pairs.judge[i] for i in take], order, analysis, coefficient))  # fmt: skip
    row["enough"], row["needs"] = _enough(row, options.min_labels)
    row.update(difference=None, difference_ci95=None, drop=None, scan=None, alarm=False)
    return row


def _figures(ids, human, judge, order, analysis, coefficient) -> dict[str, Any]:
    """The window's figures from :func:`analyse` (nothing when it has no pair)."""
    out: dict[str, Any] = {"n": len(ids), "agreement": None, "agreement_ci95": None}
    if not ids:
        return out
    full = analyse(ids, human, judge, options=analysis, order=order)
    binary = full.get("binary") or {}
    out.update(
        agreement=_finite(full.get(coefficient)),
        agreement_ci95=full.get(f"{coefficient}_ci95"),
        agreement_ci95_reason=full.get(f"{coefficient}_ci95_reason"),
        kappa=_finite(full.get("kappa")),
        ac1=_finite(full.get("ac1")),
        ac1_ci95=full.get("ac1_ci95"),
        judge_pass_rate=binary.get("judge_pass_rate"),
        judge_pass_rate_ci95=binary.get("judge_pass_rate_ci95"),
        human_pass_rate=binary.get("human_pass_rate"),
        human_pass_rate_ci95=binary.get("human_pass_rate_ci95"),
        prevalence_note=full.get("prevalence_note"),
        confusion_matrix=full["confusion_matrix"]["matrix"],
        disagreements=[d["id"] for d in full.get("disagreements", [])],
    )
    return out


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _enough(row: dict[str, Any], min_labels: int) -> tuple[bool, str | None]:
    """Whether the window can be told apart, and what it needs when it cannot."""
    n = row["n"]
    if n < min_labels:
        return False, f"{n} labels, needs {min_labels} ({min_labels - n} more)"
    if row["agreement"] is None:
        return False, f"{n} labels of one class on both sides: needs labels of another class"
    return True, None


def _reference(rows, order, analysis, coefficient, options) -> dict[str, Any]:
    """The reference's figures (and, for a window, its row, which is not tested)."""
    chosen = options.reference
    if isinstance(chosen, ReferenceTable):
        human, judge = _expand(chosen, order)
        ids = [f"reference-{i}" for i in range(len(human))]
        figures = _figures(ids, human, judge, order, analysis, coefficient)
        if figures["agreement"] is None:
            raise CalibrationInputError("its agreement is undefined", path=chosen.source)
        figures.pop("disagreements", None)
        return {"kind": "file", "name": chosen.source, **figures}
    enough = [r for r in rows if r["enough"]]
    if chosen in ("first", "past"):
        row = enough[0] if enough else None
    else:
        row = next((r for r in rows if r["window"] == chosen), None)
        _check_window(row, chosen, rows)
    if row is None:
        return {"kind": "window", "name": None, "row": None}
    if chosen == "past":
        # each window has its own reference, its past: no one figure to draw as a band
        figures = {**_ref_figures(row), "agreement": None, "agreement_ci95": None}
        return {"kind": "past", "name": row["window"], "row": row, **figures}
    kind = "first" if chosen == "first" else "window"
    return {"kind": kind, "name": row["window"], "row": row, **_ref_figures(row)}


def _against_the_past(rows, windows, pairs, order, analysis, coefficient) -> None:
    """For ``--reference past``: each window with enough labels after the first gets
    ``past``, the figures of all the windows with enough labels before it, pooled."""
    before: list[int] = []
    for window, row in zip(windows, rows, strict=True):
        if not row["enough"]:
            continue
        if before:
            figures = _figures([pairs.ids[i] for i in before], [pairs.human[i] for i in before],
                               [pairs.judge[i] for i in before], order, analysis, coefficient)  # fmt: skip
            row["past"] = {k: figures[k] for k in ("n", "agreement", "agreement_ci95")}
        before += list(window.positions)


def _check_window(row: dict[str, Any] | None, name: str, rows: list[dict[str, Any]]) -> None:
    if row is None:
        names = ", ".join(r["window"] for r in rows[:8]) + (" ..." if len(rows) > 8 else "")
        raise CalibrationInputError(f"--reference {name}: no such window (windows: {names})")
    if not row["enough"]:
        raise CalibrationInputError(f"--reference {name}: too few labels ({row['needs']})")


def _ref_figures(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("n", "agreement", "agreement_ci95", "confusion_matrix")
    return {k: row[k] for k in keys}


def _expand(table: ReferenceTable, order: list[str]) -> tuple[list[str], list[str]]:
    """The pairs behind a confusion table, as label lists."""
    human: list[str] = []
    judge: list[str] = []
    for i, row in enumerate(table.matrix):
        for j, count in enumerate(row):
            human += [table.labels[i]] * int(count)
            judge += [table.labels[j]] * int(count)
    return human, judge


def _difference(row, reference) -> tuple[float, tuple[float, float] | None]:
    """``A_w - A_r`` and its MOVER interval (module docstring)."""
    a_w, a_r = row["agreement"], reference["agreement"]
    delta = a_w - a_r
    ci_w, ci_r = row["agreement_ci95"], reference["agreement_ci95"]
    if ci_w is None or ci_r is None:
        return delta, None
    low = delta - math.hypot(a_w - ci_w[0], ci_r[1] - a_r)
    high = delta + math.hypot(ci_w[1] - a_w, a_r - ci_r[0])
    return delta, (max(-2.0, low), min(2.0, high))
