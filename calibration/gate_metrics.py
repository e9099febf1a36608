"""The figures of a calibration result that gates can name: a flat ``name -> number`` map.

``kappa_ci95_low`` is the lower bound of kappa's 95% interval, ``tpr`` the judge's
true-positive rate on pass/fail labels, and so on; a figure the result does not have (no
interval with ``--bootstrap 0``, no pass rates for three classes) is ``None``. With
``--split`` the figures are the test split's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["METRIC_NAMES", "gate_metrics"]

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
for _name in ("kappa", "weighted_kappa", "ac1"):
    _PATHS[_name] = (_name,)
    _PATHS[f"{_name}_ci95_low"] = (f"{_name}_ci95", 0)
    _PATHS[f"{_name}_ci95_high"] = (f"{_name}_ci95", 1)
for _name in ("tpr", "tnr", "judge_pass_rate", "human_pass_rate", "corrected_pass_rate"):
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
