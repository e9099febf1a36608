"""The figures of a calibration result that gates can name: a flat ``name -> number`` map.

``kappa_ci95_low`` is the lower bound of kappa's 95% interval, ``tpr`` the judge's
true-positive rate on pass/fail labels, and so on; a figure the result does not have (no
interval with ``--bootstrap 0``, no pass rates for three classes) is ``None``. With
``--split`` the figures are the test split's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["METRIC_NAMES", "gate_metrics", "undefined_reasons"]

# name -> path into the result: keys, then an index for an interval's bound.
_PATHS: dict[str, tuple[str | int, ...]] = {
    "n": ("n",),
    "unmatched_judge_only": ("unmatched", "judge_only"),
    "unmatched_human_only": ("unmatched", "human_only"),
    "observed_agreement": ("observed_agreement",),
    "expected_agreement": ("expected_agreement",),
    "balanced_accuracy": ("balanced_accuracy",),
    "mae": ("mae",),
    "pearson": ("correlation", "pearson"),
    "spearman": ("correlation", "spearman"),
    "kendall": ("correlation", "kendall"),
}
_PATHS["krippendorff_alpha"] = ("krippendorff_alpha",)
_BOOTSTRAPPED = ("kappa", "weighted_kappa", "ac1")
_BINARY = ("tpr", "tnr", "judge_pass_rate", "human_pass_rate", "corrected_pass_rate")
for _name in _BOOTSTRAPPED:
    _PATHS[_name] = (_name,)
    _PATHS[f"{_name}_ci95_low"] = (f"{_name}_ci95", 0)
    _PATHS[f"{_name}_ci95_high"] = (f"{_name}_ci95", 1)
for _name in _BINARY:
    _PATHS[_name] = ("binary", _name)
    _PATHS[f"{_name}_ci95_low"] = ("binary", f"{_name}_ci95", 0)
    _PATHS[f"{_name}_ci95_high"] = ("binary", f"{_name}_ci95", 1)

METRIC_NAMES: tuple[str, ...] = tuple(sorted(_PATHS))


def _follow(result: Any, path: tuple[str | int, ...]) -> Any:
    value = result
    for step in path:
        if isinstance(step, int):
            value = value[step] if isinstance(value, list | tuple) else None
        else:
            value = value.get(step) if isinstance(value, dict) else None
        if value is None:
            return None
    return value


def gate_metrics(result: dict[str, Any]) -> dict[str, Any]:
    """Every name of :data:`METRIC_NAMES` with its value in ``result`` (or ``None``)."""
    return {name: _follow(result, path) for name, path in _PATHS.items()}


def _family(stem: str) -> tuple[str, ...]:
    return (stem, f"{stem}_ci95_low", f"{stem}_ci95_high")


def undefined_reasons(result: dict[str, Any]) -> dict[str, str]:
    """Why a figure of ``result`` is undefined, where the result says (a gate on it then
    fails, naming the reason): kappa's own reason, no bootstrap, no pass/fail classes, no
    numeric scores, no ``--weights``."""
    reasons: dict[str, str] = {}
    numeric = "only for numeric scores (e.g. --judge-field score --human-field score)"
    reasons |= dict.fromkeys(("mae", "pearson", "spearman", "kendall"), numeric)
    if not result.get("weights"):
        reasons |= dict.fromkeys(_family("weighted_kappa"), "needs --weights linear|quadratic")
    if not isinstance(result.get("binary"), dict):
        two = "only for two classes (a pass and a fail label)"
        reasons |= {name: two for stem in _BINARY for name in _family(stem)}
    if (result.get("settings") or {}).get("bootstrap_resamples") == 0:
        for stem in _BOOTSTRAPPED:
            reasons[f"{stem}_ci95_low"] = reasons[f"{stem}_ci95_high"] = (
                "no interval (--bootstrap 0)"
            )
    if result.get("kappa_undefined_reason"):
        reasons |= dict.fromkeys(_family("kappa"), str(result["kappa_undefined_reason"]))
    return reasons
