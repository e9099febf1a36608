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

from calibration.agreement.metrics import _weight_matrix, label_values
from calibration.agreement.small_sample import SMALL_SAMPLE
from calibration.drift.alarm import SIMULATIONS, SPAN, drift_alarm
from calibration.drift.windows import Window
from calibration.errors import CalibrationInputError
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.classes import order_labels
from calibration.pairs.analysis import AnalysisOptions, analyse, scale_of

__all__ = ["DriftOptions", "ReferenceTable", "drift_report"]

ALARM_METHOD = (
    "window-limited scan (GLR, Lai 1995): each window's largest studentised drop in "
    "agreement below the reference, the window alone or pooled with the one before; "
    "threshold: the 1 - alpha quantile of the largest scan over "
    "simulated streams with no drift (parametric bootstrap from the pooled table, "
    "Westfall-Young max-T), so the chance of any false alarm over the stream is alpha"
)


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


@dataclass(frozen=True)
class _Pairs:
    ids: list[str]
    human: list[str]
    judge: list[str]


def drift_report(
    ids: Sequence[str],
    human: Sequence[str],
    judge: Sequence[str],
    windows: Sequence[Window],
    options: DriftOptions = DriftOptions(),
) -> dict[str, Any]:
    """Every window's figures, its change against the reference and the alarm, as a dict
    (strict JSON once ``calibration.io.jsonout.to_strict_json`` has run). Labels are text
    as :func:`calibration.io.labels.normalise_label` spells them."""
    pairs = _Pairs(list(ids), list(human), list(judge))
    extra = list(options.reference.labels) if isinstance(options.reference, ReferenceTable) else []
    order = order_labels([*pairs.human, *pairs.judge, *extra])
    coefficient, weights = _coefficient(pairs, order, options)
    analysis = AnalysisOptions(weights=weights, n_bootstrap=options.n_bootstrap, seed=options.seed)
    rows = [_window_row(w, pairs, order, analysis, coefficient, options) for w in windows]
    reference = _reference(rows, order, analysis, coefficient, options)
    tested = [r for r in rows if r["enough"] and r is not reference.get("row")]
    if reference["kind"] == "past":
        _against_the_past(rows, windows, pairs, order, analysis, coefficient)
    for row in tested:
        row["difference"], row["difference_ci95"] = _difference(row, row.get("past", reference))
    alarm = _alarm(reference, tested, order, weights, options)
    reference.pop("row", None)
    return {
        "n": len(pairs.ids),
        "labels": order,
        "coefficient": coefficient,
        "weights": weights,
        "min_labels": options.min_labels,
        "reference": reference,
        "windows": rows,
        "alarm": alarm,
        "status": _status(rows, tested, alarm, options.min_labels),
    }


def _coefficient(pairs: _Pairs, order: list[str], options: DriftOptions):
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


def _alarm(reference, tested, order, weights, options) -> dict[str, Any]:
    out: dict[str, Any] = {
        "method": ALARM_METHOD
        if reference.get("kind") != "past"
        else ALARM_METHOD.replace("below the reference", "below all the windows before it"),
        "alpha": options.alpha,
        "span": SPAN,
        "simulations": options.simulations,
        "seed": options.seed,
        "threshold": None,
        "p_value": None,
        "fired": False,
        "first_window": None,
        "windows": [],
    }
    if reference.get("confusion_matrix") is None or not tested:
        return out
    k = len(order)
    d = _weight_matrix(k, weights, label_values(order) if weights else None)
    found = drift_alarm(
        np.asarray(reference["confusion_matrix"]),
        [np.asarray(r["confusion_matrix"]) for r in tested],
        d / d.max(),
        alpha=options.alpha,
        simulations=options.simulations,
        past=reference["kind"] == "past",
        seed=options.seed,
    )
    for row, drop, level, fired in zip(tested, found.drops, found.scan, found.alarms, strict=True):
        row.update(drop=drop, scan=level, alarm=fired)
    fired_windows = [r["window"] for r in tested if r["alarm"]]
    out.update(
        threshold=found.threshold,
        p_value=found.p_value,
        fired=bool(fired_windows),
        first_window=fired_windows[0] if fired_windows else None,
        windows=fired_windows,
    )
    return out


def _status(rows, tested, alarm, min_labels: int) -> dict[str, Any]:
    """``alarm`` (exit 3), ``stable`` (0) or ``too_few_labels`` (1), with the sentence."""
    if alarm["fired"]:
        return {
            "verdict": "alarm",
            "reason": f"agreement dropped at window {alarm['first_window']}",
        }
    if tested:
        return {"verdict": "stable", "reason": f"no alarm over {len(tested)} windows"}
    enough = sum(r["enough"] for r in rows)
    best = max((r["n"] for r in rows), default=0)
    where = "no window" if enough == 0 else "no window beyond the reference"
    return {
        "verdict": "too_few_labels",
        "reason": f"{where} has enough labels to tell: each needs at least {min_labels} "
        f"labels of more than one class (the largest window has {best})",
    }
