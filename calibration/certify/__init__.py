"""Certified confidence thresholds for a cascade of judges (`judge certify`): each rung
decides the cases it is confident on, with a guarantee on agreement with people; the
rest go to the next rung, and what is left to people."""

from __future__ import annotations

from calibration.certify.cascade import CascadeResult, cascade_deltas, certify_cascade, decide
from calibration.certify.certificate import (
    FORMAT,
    CertifyOptions,
    build_certificate,
    certificate_sha256,
)
from calibration.certify.inputs import CertifyInputs, read_certify_inputs
from calibration.certify.release import release_pass_rate
from calibration.certify.threshold import (
    GRIDS,
    Curve,
    RungThreshold,
    clopper_pearson_upper,
    fewest_decided,
    rung_threshold,
)

__all__ = [
    "FORMAT",
    "GRIDS",
    "CertifyInputs",
    "CertifyOptions",
    "build_certificate",
    "certificate_sha256",
    "read_certify_inputs",
    "release_pass_rate",
    "CascadeResult",
    "Curve",
    "RungThreshold",
    "cascade_deltas",
    "certify_cascade",
    "clopper_pearson_upper",
    "decide",
    "fewest_decided",
    "rung_threshold",
]
