"""Calibrate an LLM judge against human labels: agreement, intervals, readiness, report.

Pure math on label files from any judge; this package never imports the grading engine.

The names below are imported on first use (PEP 562 `__getattr__`), as in `judge`: the
engine reads rows (`calibration.io.rows`), gates (`calibration.decisions.gates`) and strict JSON
(`calibration.io.jsonout`) from here without loading scipy or scikit-learn, and
`from calibration import calibrate` works as usual. Type checkers read the imports under
TYPE_CHECKING.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from calibration.agreement.coefficients import ac1_from_confusion, gwet_ac1
    from calibration.agreement.correlation import correlations, grouped_correlations
    from calibration.agreement.metrics import (
        adjacent_agreement,
        balanced_accuracy,
        cohen_kappa,
        confusion,
        expected_agreement,
        kappa_from_confusion,
        mean_absolute_error,
        observed_agreement,
        per_class_scores,
    )
    from calibration.agreement.multirater import (
        fleiss_kappa,
        fleiss_kappa_from_counts,
        krippendorff_alpha,
    )
    from calibration.agreement.panel import kish_n_eff, panel_agreement
    from calibration.decisions.plan import LabelPlan, plan_sample_size, predicted_width
    from calibration.decisions.readiness import assess_readiness
    from calibration.errors import CalibrationInputError
    from calibration.estimates.ppi import MeanEstimate, ppi_mean, ppi_mean_sampled
    from calibration.estimates.prediction_powered import (
        prediction_powered_files,
        prediction_powered_summary,
    )
    from calibration.estimates.rates import corrected_pass_rate, rogan_gladen, rogan_gladen_interval
    from calibration.inference.intervals import (
        binomial_test_p,
        bootstrap_ci,
        bootstrap_indices_ci,
        normal_interval,
        wilson_interval,
    )
    from calibration.inference.means import (
        mean_interval,
        welch_interval,
        welch_p_value,
        wilcoxon_p_value,
    )
    from calibration.io.labels import JoinedLabels, LabelSet, join_labels, read_labels
    from calibration.report.result import calibrate, write_report

_HOMES = {
    "calibration.agreement.coefficients": ("ac1_from_confusion", "gwet_ac1"),
    "calibration.agreement.correlation": ("correlations", "grouped_correlations"),
    "calibration.errors": ("CalibrationInputError",),
    "calibration.inference.intervals": (
        "binomial_test_p",
        "bootstrap_ci",
        "bootstrap_indices_ci",
        "normal_interval",
        "wilson_interval",
    ),
    "calibration.inference.means": (
        "mean_interval",
        "welch_interval",
        "welch_p_value",
        "wilcoxon_p_value",
    ),
    "calibration.io.labels": ("JoinedLabels", "LabelSet", "join_labels", "read_labels"),
    "calibration.agreement.metrics": (
        "adjacent_agreement",
        "balanced_accuracy",
        "cohen_kappa",
        "confusion",
        "expected_agreement",
        "kappa_from_confusion",
        "mean_absolute_error",
        "observed_agreement",
        "per_class_scores",
    ),
    "calibration.agreement.multirater": (
        "fleiss_kappa",
        "fleiss_kappa_from_counts",
        "krippendorff_alpha",
    ),
    "calibration.agreement.panel": ("kish_n_eff", "panel_agreement"),
    "calibration.decisions.plan": ("LabelPlan", "plan_sample_size", "predicted_width"),
    "calibration.estimates.ppi": ("MeanEstimate", "ppi_mean", "ppi_mean_sampled"),
    "calibration.estimates.prediction_powered": (
        "prediction_powered_files",
        "prediction_powered_summary",
    ),
    "calibration.estimates.rates": ("corrected_pass_rate", "rogan_gladen", "rogan_gladen_interval"),
    "calibration.decisions.readiness": ("assess_readiness",),
    "calibration.report.result": ("calibrate", "write_report"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "CalibrationInputError",
    "ac1_from_confusion",
    "JoinedLabels",
    "LabelPlan",
    "LabelSet",
    "MeanEstimate",
    "adjacent_agreement",
    "assess_readiness",
    "balanced_accuracy",
    "binomial_test_p",
    "bootstrap_ci",
    "bootstrap_indices_ci",
    "calibrate",
    "cohen_kappa",
    "confusion",
    "corrected_pass_rate",
    "correlations",
    "expected_agreement",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "grouped_correlations",
    "gwet_ac1",
    "join_labels",
    "kappa_from_confusion",
    "kish_n_eff",
    "krippendorff_alpha",
    "mean_absolute_error",
    "mean_interval",
    "normal_interval",
    "observed_agreement",
    "per_class_scores",
    "plan_sample_size",
    "ppi_mean",
    "panel_agreement",
    "ppi_mean_sampled",
    "prediction_powered_files",
    "prediction_powered_summary",
    "predicted_width",
    "read_labels",
    "rogan_gladen",
    "rogan_gladen_interval",
    "welch_interval",
    "welch_p_value",
    "wilcoxon_p_value",
    "wilson_interval",
    "write_report",
]


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'calibration' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups find it without this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
