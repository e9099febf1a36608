"""The certificate of ``judge certify`` (JSON, ``llm-judge-certificate/1``), its hash, and
the verdict its figures call for.

Shape (``judge grade --certificate`` reads it)::

    {"format", "agreement", "delta", "min_decided", "n", "rubric": {"id", "version",
     "sha256"} | null, "rungs": [{"records", "judge", "confidence_source", "threshold",
     "reached", "decided", "agreement", "disagreement_upper", "cost_per_1000"}],
     "coverage", "coverage_ci95", "certified", "method", "assumes"}

Beside those keys the dict may carry ``kept`` (under the default split for two rungs or
more: ``"pooled"`` or ``"per-rung"``, the test kept), ``status``, ``release_pass_rate`` and
``curves`` (what the report prints and draws); the hash covers whatever the dict holds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.certify.cascade import POOLED_SHARE, CascadeResult, Split, certify_cascade
from calibration.certify.inputs import CertifyInputs
from calibration.certify.threshold import Grid, RungThreshold, fewest_decided

__all__ = [
    "FORMAT",
    "CertifyOptions",
    "build_certificate",
    "certificate_sha256",
    "highest_certifiable",
]

FORMAT = "llm-judge-certificate/1"
ASSUMES = (
    "the labelled cases are a random sample of the stream the certificate is used on "
    "(exchangeable with it), graded by the same judges with the same rubric and prompts"
)


@dataclass(frozen=True)
class CertifyOptions:
    agreement: float
    delta: float = 0.1
    min_decided: int = 30
    grid: Grid = "relay"
    split: Split = "either"


def certificate_sha256(certificate: dict[str, Any]) -> str:
    """The hash records cite: sha256 of the certificate's canonical JSON (sorted keys, no
    spaces, UTF-8)."""
    text = json.dumps(certificate, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _levels(options: CertifyOptions, rungs: int) -> tuple[float, str]:
    """Each rung's own test level and how the error budget is shared."""
    if rungs == 1 or options.split == "none":
        return options.delta, "delta"
    if options.split == "either":
        rest = 1 - POOLED_SHARE
        return rest * options.delta / rungs, f"{rest:.1f} x delta/{rungs}"
    if options.split == "pooled":
        return options.delta, "delta"
    return options.delta / rungs, f"delta/{rungs}"


def method_line(options: CertifyOptions, rungs: int) -> str:
    delta, level = _levels(options, rungs)
    fewest = fewest_decided(options.agreement, delta)
    starts = {
        "late": f"from max({options.min_decided}, {fewest}, min({2 * fewest}, a third of the "
        "cases reaching the rung)) decided cases",
        "every": f"from {options.min_decided} decided cases",
        "two": "two sequences at half the level each, from the late start and from a third "
        "of the cases reaching the rung, the one deciding more kept",
        "relay": "three chains joined (graphical test), each with a third of the level, "
        "from the late start, a quarter and half of the cases reaching the rung; a rejected "
        "point hands its level to the next"
        if rungs == 1
        else "two chains joined (graphical test), each with half the level, from the late "
        "start and from half the cases reaching the rung; a rejected point hands its level "
        "to the next",
    }
    per_rung = (
        "per rung, on the labelled cases reaching it: fixed-sequence test from the most "
        f"confident down, {starts[options.grid]}, exact Clopper-Pearson upper bound on "
        f"disagreement at level 1 - {level}, threshold = the lowest confidence "
        + ("rejected" if options.grid == "relay" else "passed before the first failure")
    )
    pooled = (
        "one test of the whole cascade: every rung's threshold at its own m most confident "
        "labelled cases, m stepped up along two joined chains (from the late start and from "
        "half the cases), exact "
        "Clopper-Pearson upper bound on the disagreement of all the cases the cascade "
        "decides"
    )
    if rungs == 1 or options.split in ("bonferroni", "none"):
        return per_rung
    if options.split == "pooled":
        return pooled + " at level 1 - delta"
    return (
        f"the better of two tests, their levels summing to delta (union bound): {pooled} "
        f"at level 1 - {POOLED_SHARE:.1f} x delta; or {per_rung}"
    )


def needed_labels(options: CertifyOptions, rungs: int) -> int:
    """The fewest labelled cases with which anything could be certified at all: ``N``, and
    the fewest on which no disagreement certifies the agreement at the loosest level any
    of the tests runs at (``delta``, ``0.7 delta`` for a cascade's pooled test under
    ``"either"``, ``delta / rungs`` under Bonferroni)."""
    loosest = {
        "either": POOLED_SHARE * options.delta,
        "pooled": options.delta,
        "none": options.delta,
    }
    delta = options.delta if rungs == 1 else loosest.get(options.split, options.delta / rungs)
    return max(options.min_decided, fewest_decided(options.agreement, delta))


def _rung(rung, test: RungThreshold, cost: float | None) -> dict[str, Any]:
    return {
        "records": rung.path,
        "judge": rung.judge,
        "confidence_source": rung.confidence_source,
        "threshold": test.threshold,
        "reached": test.reached,
        "decided": test.decided,
        "agreement": test.agreement,
        "disagreement_upper": test.upper,
        "cost_per_1000": cost,
    }


def build_certificate(
    inputs: CertifyInputs,
    options: CertifyOptions,
    costs: list[float | None],
) -> tuple[dict[str, Any], CascadeResult]:
    """The certificate of the cascade of ``inputs`` (shape in the module docstring)."""
    result = run_cascade(inputs, options)
    rungs = [_rung(r, t, c) for r, t, c in zip(inputs.rungs, result.rungs, costs, strict=True)]
    cert = {
        "format": FORMAT,
        "agreement": options.agreement,
        "delta": options.delta,
        "min_decided": options.min_decided,
        "n": result.n,
        "rubric": inputs.rubric,
        "rungs": rungs,
        "coverage": result.coverage,
        "coverage_ci95": list(result.coverage_ci95),
        "certified": result.certified,
        "method": method_line(options, len(inputs.rungs)),
        "assumes": ASSUMES,
    }
    if result.kept:
        cert["kept"] = result.kept
    return cert, result


def run_cascade(inputs: CertifyInputs, options: CertifyOptions) -> CascadeResult:
    conf = [r.confidences(inputs.ids) for r in inputs.rungs]
    agree = [r.agrees(inputs.ids, inputs.human) for r in inputs.rungs]
    return certify_cascade(
        conf,
        agree,
        agreement=options.agreement,
        delta=options.delta,
        min_decided=options.min_decided,
        grid=options.grid,
        split=options.split,
    )


def highest_certifiable(inputs: CertifyInputs, options: CertifyOptions) -> float | None:
    """The highest agreement (in steps of 0.005, below the one asked) at which this cascade
    certifies something at the same delta; ``None`` when none from 0.5 up does."""
    conf = [r.confidences(inputs.ids) for r in inputs.rungs]
    agree = [r.agrees(inputs.ids, inputs.human) for r in inputs.rungs]
    for a in np.arange(round(options.agreement - 0.005, 3), 0.4999, -0.005):
        found = certify_cascade(
            conf, agree, agreement=float(a), delta=options.delta,
            min_decided=options.min_decided, grid=options.grid, split=options.split,
        )  # fmt: skip
        if found.certified:
            return round(float(a), 3)
    return None
