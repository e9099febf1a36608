"""The certify job: a certified confidence threshold per rung of a cascade of judges, from
people's labels (Trust or Escalate: Jung, Brahman and Choi, ICLR 2025). The statistics are
:mod:`calibration.certify`'s; this module reads the files, prices each rung from the
records' tokens, writes the outputs and says which exit the result calls for.

Exit: 0 a certificate (some rung decides); 3 nothing can be certified at the agreement
asked (the result names the highest that could be, at this delta); 1 too few labels (it
says how many are needed); 2 bad input (:class:`UsageError`, naming file, line and id).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from calibration.certify.cascade import decide
from calibration.certify.certificate import (
    CertifyOptions,
    build_certificate,
    highest_certifiable,
    needed_labels,
)
from calibration.certify.inputs import CertifyInputs, Rung, read_certify_inputs
from calibration.certify.release import release_pass_rate
from calibration.certify.render import certificate_markdown, coverage_risk_png
from calibration.errors import CalibrationInputError
from calibration.io.classes import choose_positive, order_labels, pass_fail_classes
from calibration.io.jsonout import dumps_strict, to_strict_json
from calibration.io.labels import ABSTAINED
from calibration.io.vocabulary import label_key
from judge.engine.atomic import replace_text
from judge.engine.pricing import estimate_cost, price_for
from judge.errors import UsageError

__all__ = ["CertifyRequest", "CertifyResult", "certify", "certify_files", "run_certify"]

EXIT = {"certified": 0, "not_certifiable": 3, "too_few_labels": 1}


@dataclass(frozen=True)
class CertifyRequest:
    """`judge certify RECORDS... --labels HUMAN --agreement A`."""

    records: tuple[Path, ...]
    labels: Path
    agreement: float
    delta: float = 0.1
    min_decided: int = 30
    json: bool = False
    output: Path | None = None
    html: Path | None = None


@dataclass(frozen=True)
class CertifyResult:
    """The certificate (strict JSON), the text to print and the exit its status calls for."""

    certificate: dict[str, Any]
    text: str

    @property
    def exit_code(self) -> int:
        return EXIT[self.certificate["status"]["verdict"]]


def run_certify(request: CertifyRequest) -> CertifyResult:
    """Read, certify, price; write `-o` (the certificate as JSON) and `--html`."""
    _check(request)
    options = CertifyOptions(request.agreement, request.delta, request.min_decided)
    try:
        inputs = read_certify_inputs(request.records, request.labels)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    cert, curves = certify_with_curves(inputs, options)
    text = dumps_strict(cert) + "\n" if request.json else certificate_markdown(cert)
    if request.output:
        request.output.parent.mkdir(parents=True, exist_ok=True)
        replace_text(request.output, dumps_strict(cert) + "\n")  # never half a certificate
    if request.html:
        write_certify_html(request.html, cert, curves)
    return CertifyResult(cert, text)


def certify_files(
    records: str | Path | list[str | Path] | tuple[str | Path, ...],
    labels: str | Path,
    *,
    agreement: float,
    delta: float = 0.1,
    min_decided: int = 30,
) -> dict[str, Any]:
    """The Python API of `judge certify`: the certificate dict `--json` prints (its
    ``status`` says certified, not_certifiable or too_few_labels). Bad input raises
    :class:`judge.errors.UsageError`, naming the file and the id.

    >>> from judge import certify
    >>> cert = certify(["examples/certify/cheap.jsonl", "examples/certify/strong.jsonl"],
    ...                "examples/certify/labels.csv", agreement=0.9)
    >>> cert["status"]["verdict"], [r["threshold"] for r in cert["rungs"]]
    ('certified', [None, 0.8371])
    """
    paths = (records,) if isinstance(records, str | Path) else tuple(records)
    request = CertifyRequest(
        tuple(Path(p) for p in paths), Path(labels), agreement, delta, min_decided
    )
    return run_certify(request).certificate


def _check(request: CertifyRequest) -> None:
    if not 0 < request.agreement < 1:
        raise UsageError("--agreement must lie between 0 and 1 (e.g. 0.9)")
    if not 0 < request.delta < 1:
        raise UsageError("--delta must lie between 0 and 1 (e.g. 0.1)")
    if request.min_decided < 1:
        raise UsageError("--min-decided needs N >= 1")


def certify(inputs: CertifyInputs, options: CertifyOptions) -> dict[str, Any]:
    """The certificate of a cascade, with its status, cost and release pass rate, as
    strict JSON."""
    return certify_with_curves(inputs, options)[0]


def certify_with_curves(
    inputs: CertifyInputs, options: CertifyOptions
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The certificate and each rung's coverage-risk curve (for the chart)."""
    costs = [_cost_per_1000(r) for r in inputs.rungs]
    cert, result = build_certificate(inputs, options, costs)
    cert["status"] = _status(inputs, options, cert)
    cert["cost"] = _cascade_cost(cert, costs)
    cert["release_pass_rate"] = _release(inputs, cert)
    curves = [_curve(t, d) for t, d in zip(result.rungs, result.deltas, strict=True)]
    return to_strict_json(cert), to_strict_json(curves)


def _status(inputs: CertifyInputs, options: CertifyOptions, cert: dict[str, Any]) -> dict[str, str]:
    need = needed_labels(options, len(inputs.rungs))
    if cert["n"] < need:
        return {
            "verdict": "too_few_labels",
            "reason": f"{cert['n']} labelled cases; certifying agreement {options.agreement} at "
            f"delta {options.delta} needs at least {need} (label {need - cert['n']} more)",
        }
    if cert["certified"]:
        return {"verdict": "certified", "reason": f"{cert['coverage']:.1%} of cases decided"}
    best = highest_certifiable(inputs, options)
    where = (
        f"the highest agreement that could be certified at delta {options.delta} is {best}"
        if best is not None
        else f"nothing could be certified at any agreement from 0.5 at delta {options.delta}"
    )
    return {
        "verdict": "not_certifiable",
        "reason": f"no rung can decide any case at agreement {options.agreement}: {where}",
    }


def _cost_per_1000(rung: Rung) -> float | None:
    """USD per 1,000 cases graded by this rung, from its records' tokens and the price
    table (judge.engine.pricing); None when the model is not in the table or the records
    carry no token counts."""
    if rung.tokens is None:
        return None
    cost = estimate_cost(rung.tokens[0], rung.tokens[1], price_for(rung.judge.get("model")))
    return None if cost is None else cost / rung.records * 1000


def _cascade_cost(cert: dict[str, Any], costs: list[float | None]) -> dict[str, Any] | None:
    """Each rung grades the cases that reach it: sum of cost x share reaching; against
    grading every case with the last rung."""
    known = [c for c in costs if c is not None]
    if len(known) < len(costs) or not cert["n"]:
        return None
    reach = [r["reached"] / cert["n"] for r in cert["rungs"]]
    return {
        "cascade_per_1000": sum(c * s for c, s in zip(known, reach, strict=True)),
        "last_rung_per_1000": known[-1],
    }


def _release(inputs: CertifyInputs, cert: dict[str, Any]) -> dict[str, Any] | None:
    """The release pass rate over every case of the first rung's file (None when the labels
    are not two classes)."""
    classes = pass_fail_classes(order_labels([v for v in set(inputs.human) if v != ABSTAINED]))
    if classes is None:
        return None
    positive = label_key(choose_positive(order_labels(classes)))
    ids = inputs.rungs[0].ids
    thresholds = [r["threshold"] for r in cert["rungs"]]
    by = decide([r.confidences(ids) for r in inputs.rungs], thresholds)
    human = dict(zip(inputs.ids, inputs.human, strict=True))

    def passes(label: str | None) -> float:
        return float(label is not None and label_key(label) == positive)

    verdict = [
        passes(inputs.rungs[j].labels.get(i)) if j >= 0 else 0.0
        for i, j in zip(ids, by, strict=True)
    ]
    groups: dict[str, list[float]] = {"f": [], "y": [], "fu": [], "e": []}
    for i, j, v in zip(ids, by, verdict, strict=True):
        if j >= 0 and i in human:
            groups["f"].append(v)
            groups["y"].append(passes(human[i]))
        elif j >= 0:
            groups["fu"].append(v)
        elif i in human:
            groups["e"].append(passes(human[i]))
    out = release_pass_rate(
        groups["f"], groups["y"], groups["fu"], groups["e"], escalated_total=int((by < 0).sum())
    )
    out["pass_label"] = choose_positive(order_labels(classes))
    return out


def _curve(test, delta: float) -> dict[str, Any]:
    """The coverage-risk curve of one rung, thinned to at most 400 points for the chart."""
    c = test.curve
    usable = int(c.decided[-1]) if len(c.decided) else 0
    keep = np.unique(
        np.linspace(0, max(0, len(c.decided) - 1), min(400, len(c.decided))).astype(int)
    )
    decided, wrong = c.decided[keep], c.disagreements[keep]
    return {
        "usable": usable,
        "delta": delta,
        "threshold": c.thresholds[keep].tolist(),
        "share": (decided / max(1, usable)).tolist(),
        "agreement": (1 - wrong / np.maximum(decided, 1)).tolist(),
        "bound": (1 - c.upper(delta)[keep]).tolist() if len(keep) else [],
    }


def write_certify_html(path: Path, cert: dict[str, Any], curves: list[dict[str, Any]]) -> Path:
    """The certificate as one self-contained HTML file, with the coverage-risk chart."""
    from judge.report.certify import write_certify_report

    chart = base64.b64encode(coverage_risk_png(cert, curves)).decode()
    return write_certify_report(path, cert, chart)
