"""The alarm's part of a drift report: each stream's (slice's) alarm under the family's
one threshold, the smallest drop it can detect, its verdict and the family's."""

from __future__ import annotations

from statistics import median
from typing import Any

import numpy as np

from calibration.agreement.metrics import _weight_matrix, label_values
from calibration.drift.alarm import SPAN, ScanChoice, Watched, family_alarm
from calibration.drift.statistic import detectable_drop

__all__ = ["alarm_method", "family_summary", "stream_alarms", "stream_status"]

WHAT = {
    "disagreement": "studentised rise in the judge's disagreement with people (arcsine)",
    "kappa": "studentised drop in agreement (kappa)",
}
NULLS = {
    False: "parametric bootstrap from the pooled table; assumes independent pairs",
    True: "cluster bootstrap of the stream's groups; assumes independent groups",
}


def alarm_method(statistic: str, past: bool, grouped: bool) -> str:
    """The alarm's method in one sentence: what it scans, against what, its null."""
    against = "all the windows before it" if past else "the reference"
    return (
        f"window-limited scan (GLR, Lai 1995): each window's largest {WHAT[statistic]} "
        f"against {against}, the window alone or pooled with the one before; threshold: "
        "the 1 - alpha quantile of the largest scan over simulated streams with no drift "
        f"({NULLS[grouped]}; Westfall-Young max-T), so the chance of any false alarm over "
        "the stream is alpha"
    )


def _empty(prepared: dict[str, Any], options: Any) -> dict[str, Any]:
    past = prepared["report"]["reference"].get("kind") == "past"
    return {
        "method": alarm_method(options.statistic, past, prepared["clusters"] is not None),
        "statistic": options.statistic,
        "alpha": options.alpha,
        "span": SPAN,
        "simulations": options.simulations,
        "seed": options.seed,
        "threshold": None,
        "p_value": None,
        "tested": len(prepared["tested"]),
        "fired": False,
        "first_window": None,
        "windows": [],
        "detectable": None,
    }


def stream_alarms(prepared: list[dict[str, Any]], order, weights, options) -> list[dict]:
    """Each prepared stream's alarm dict, the streams with a reference and a tested window
    scanned under one threshold (:func:`calibration.drift.alarm.family_alarm`)."""
    outs = [_empty(p, options) for p in prepared]
    live = [i for i, p in enumerate(prepared) if _testable(p)]
    if not live:
        return outs
    d = _weight_matrix(len(order), weights, label_values(order) if weights else None)
    d = d / d.max()
    past = options.reference == "past"
    watched = [
        Watched(
            np.asarray(prepared[i]["report"]["reference"]["confusion_matrix"]),
            [np.asarray(r["confusion_matrix"]) for r in prepared[i]["tested"]],
            prepared[i]["clusters"],
        )
        for i in live
    ]
    found = family_alarm(watched, d, ScanChoice(SPAN, past, options.statistic),
                         alpha=options.alpha, simulations=options.simulations,
                         seed=options.seed)  # fmt: skip
    for i, alarm, stream in zip(live, found, watched, strict=True):
        tested = prepared[i]["tested"]
        for row, drop, level, fired in zip(tested, alarm.drops, alarm.scan, alarm.alarms,
                                           strict=True):  # fmt: skip
            row.update(drop=drop, scan=level, alarm=fired)
        fired_windows = [r["window"] for r in tested if r["alarm"]]
        outs[i].update(
            threshold=alarm.threshold,
            p_value=alarm.p_value,
            fired=bool(fired_windows),
            first_window=fired_windows[0] if fired_windows else None,
            windows=fired_windows,
            detectable=_detectable(stream, d, alarm.threshold, past, options.statistic),
        )
    return outs


def _testable(prepared: dict[str, Any]) -> bool:
    reference = prepared["report"]["reference"]
    return reference.get("confusion_matrix") is not None and bool(prepared["tested"])


def _detectable(stream: Watched, d, threshold: float, past: bool, statistic: str):
    """The smallest drop in kappa caught within two windows of the stream's median size in
    80% of spans (:func:`calibration.drift.statistic.detectable_drop`): against the
    reference's table, or, with ``past``, against all the stream's windows but the last
    two, pooled (the past at the stream's end); ``None`` for the kappa statistic."""
    if statistic != "disagreement":
        return None
    sizes = [float(np.sum(w)) for w in stream.windows]
    window = int(round(median(sizes)))
    table = np.asarray(stream.reference, dtype=float)
    if past:
        pooled = table + np.sum(np.asarray(stream.windows, dtype=float), axis=0)
        n_past = max(float(table.sum()), float(pooled.sum()) - 2 * window)
        table = pooled * n_past / pooled.sum()
    return detectable_drop(table, window, threshold, d)


def stream_status(rows, alarm, min_labels: int) -> dict[str, Any]:
    """``alarm`` (exit 3), ``stable`` (0) or ``too_few_labels`` (4), with the sentence."""
    if alarm["fired"]:
        return {
            "verdict": "alarm",
            "reason": f"agreement dropped at window {alarm['first_window']}",
        }
    if alarm["tested"]:
        return {"verdict": "stable", "reason": f"no alarm over {alarm['tested']} windows"}
    enough = sum(r["enough"] for r in rows)
    best = max((r["n"] for r in rows), default=0)
    where = "no window" if enough == 0 else "no window beyond the reference"
    return {
        "verdict": "too_few_labels",
        "reason": f"{where} has enough labels to tell: each needs at least {min_labels} "
        f"labels of more than one class (the largest window has {best})",
    }


def family_summary(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The family's alarm (which slices fired, under the one threshold) and verdict: an
    alarm if any slice alarms, stable if any was tested and none did, else too few."""
    fired = [r.get("slice") for r in reports if r["alarm"]["fired"]]
    tested = [r for r in reports if r["alarm"]["tested"]]
    threshold = next((r["alarm"]["threshold"] for r in tested), None)
    alarm = {"threshold": threshold, "fired": bool(fired), "slices": fired}
    if fired:
        status = {"verdict": "alarm", "reason": f"agreement dropped in {len(fired)} of "
                  f"{len(reports)} slices: {', '.join(map(str, fired))}"}  # fmt: skip
    elif tested:
        status = {"verdict": "stable", "reason": f"no alarm in {len(tested)} slices tested"}
    else:
        status = {"verdict": "too_few_labels", "reason": "no slice has enough labels to tell"}
    return {"alarm": alarm, "status": status}
