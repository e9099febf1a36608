"""Calibrate an LLM judge against human labels: agreement, intervals, readiness, report.

Pure math on label files from any judge; this package never imports the grading engine.
"""

from calibration.coefficients import ac1_from_confusion, gwet_ac1
from calibration.correlation import correlations, grouped_correlations
from calibration.errors import CalibrationInputError
from calibration.intervals import (
    binomial_test_p,
    bootstrap_ci,
    bootstrap_indices_ci,
    wilson_interval,
)
from calibration.labels import JoinedLabels, LabelSet, join_labels, read_labels
from calibration.metrics import (
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
from calibration.multirater import fleiss_kappa, fleiss_kappa_from_counts, krippendorff_alpha
from calibration.plan import LabelPlan, plan_sample_size, predicted_width
from calibration.ppi import MeanEstimate, ppi_mean, ppi_mean_sampled
from calibration.ppi_summary import prediction_powered_files, prediction_powered_summary
from calibration.rates import corrected_pass_rate, rogan_gladen, rogan_gladen_interval
from calibration.readiness import assess_readiness
from calibration.report import calibrate, write_report

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
    "krippendorff_alpha",
    "mean_absolute_error",
    "observed_agreement",
    "per_class_scores",
    "plan_sample_size",
    "ppi_mean",
    "ppi_mean_sampled",
    "prediction_powered_files",
    "prediction_powered_summary",
    "predicted_width",
    "read_labels",
    "rogan_gladen",
    "rogan_gladen_interval",
    "wilson_interval",
    "write_report",
]
