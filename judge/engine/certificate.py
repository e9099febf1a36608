"""A certificate (`judge certify`'s file) read, bound to its rubric and judges, and applied.

A certificate says, for each rung of a cascade (cheapest judge first), the confidence
threshold at or above which that rung's verdicts agree with people at the certified level
(`agreement` A, with probability 1 - `delta`, on cases from the stream its labels came
from). Applying it: a rung *decides* a case when its record is a verdict (`ok` or
`abstained`) with a `confidence` at or above the rung's threshold; a rung whose threshold
is null decides nothing, and a verdict without a confidence is never decided. What a rung
does not decide goes to the next rung; what no rung decides is `escalated`, to people.

The certificate is bound to what it was made for: the rubric (id, version and the file's
sha256) and each rung's judge (its model and the settings that change a verdict, compared
as a resumed run compares them: `judge.engine.identity.judge_differences`). Any other is
refused, naming what differs (a UsageError, exit 2). Its hash, which every record graded
under it cites, is sha256 over its canonical JSON (`certificate_hash`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.engine.identity import judge_differences
from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import GradedRecord

FORMAT = "llm-judge-certificate/1"
VERDICTS = ("ok", "abstained")  # the statuses that are a judge's verdict


class CertifiedRubric(BaseModel):
    """The rubric a certificate was made for."""

    model_config = ConfigDict(extra="allow")

    id: str
    version: int
    sha256: str


class CertifiedRung(BaseModel):
    """One rung: its judge (the records' `judge` object), its threshold (None: it decides
    nothing at the certified agreement) and what certify measured of it."""

    model_config = ConfigDict(extra="allow")

    records: str | None = None
    judge: dict[str, Any]
    confidence_source: str | None = None
    threshold: float | None = Field(ge=0.0, le=1.0)
    reached: int | None = None
    decided: int | None = None
    agreement: float | None = None
    disagreement_upper: float | None = None
    cost_per_1000: float | None = None

    @property
    def model(self) -> str:
        return str(self.judge.get("model"))


class CertificateBody(BaseModel):
    """The certificate file's shape (`llm-judge-certificate/1`); extra fields are kept."""

    model_config = ConfigDict(extra="allow")

    format: Literal["llm-judge-certificate/1"]
    agreement: float = Field(gt=0.0, le=1.0)
    delta: float = Field(gt=0.0, lt=1.0)
    min_decided: int | None = None
    n: int = Field(ge=0)
    rubric: CertifiedRubric
    rungs: list[CertifiedRung] = Field(min_length=1)
    coverage: float | None = None
    coverage_ci95: list[float] | None = None
    certified: bool
    method: str | None = None
    assumes: str | None = None


@dataclass(frozen=True)
class Certificate:
    """A certificate read from `path`, with the hash records cite."""

    path: Path
    body: CertificateBody
    sha256: str

    @property
    def rungs(self) -> list[CertifiedRung]:
        return self.body.rungs

    def summary(self) -> dict[str, Any]:
        """What a grade's summary says of the certificate it applied."""
        return {
            "file": str(self.path),
            "sha256": self.sha256,
            "agreement": self.body.agreement,
            "delta": self.body.delta,
            "certified": self.body.certified,
            "coverage": self.body.coverage,
            "method": self.body.method,
        }


def certificate_hash(data: Any) -> str:
    """sha256 hex of the canonical JSON (sorted keys, no spaces, UTF-8) of a certificate."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def load_certificate(path: Path, *, named: str = "--certificate") -> Certificate:
    """Read and check a certificate file; a UsageError naming the file (after `named`, what
    gave it) when it cannot be read, is not JSON, or is not a certificate of this format."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UsageError(f"{named} {path}: cannot read it: {why}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{named} {path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise UsageError(
            f"{named} {path}: not a certificate of format {FORMAT!r} (found {found!r})"
        )
    try:
        body = CertificateBody.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"{named} {path}: {problems}") from None
    return Certificate(path, body, certificate_hash(data))


def check_binding(
    certificate: Certificate,
    rubric: Rubric,
    identities: list[dict[str, Any]],
    *,
    where: str | None = None,
) -> None:
    """UsageError unless `certificate` was made for `rubric` and for these judges, one per
    rung in the cascade's order (each a grader's identity), naming the first difference;
    the message begins with `where` (default: `--certificate PATH`)."""
    made = certificate.body.rubric
    where = where or f"--certificate {certificate.path}"
    if (made.id, made.version, made.sha256) != (rubric.id, rubric.version, rubric.sha256):
        theirs = f"{made.id}@{made.version} (sha256 {made.sha256[:12]})"
        ours = f"{rubric.ref} (sha256 {rubric.sha256[:12]})"
        raise UsageError(f"{where} was made for rubric {theirs}, not {ours}")
    rungs = certificate.rungs
    if len(rungs) != len(identities):
        raise UsageError(
            f"{where} certifies a cascade of {len(rungs)} rung(s); this run has "
            f"{len(identities)} judge(s)"
        )
    for number, (rung, identity) in enumerate(zip(rungs, identities, strict=True), 1):
        differs = _judge_differs(identity, rung.judge)
        if differs:
            raise UsageError(
                f"{where}: rung {number} was certified for another judge ({'; '.join(differs)})"
            )


def _judge_differs(identity: dict[str, Any], judge: dict[str, Any]) -> list[str]:
    """`judge_differences`, and for a judge with no endpoint (the rules judge), its name."""
    if "judge" in identity:
        ours = str(identity["judge"])
        return [] if judge.get("model") == ours else [f"model {judge.get('model')!r} -> {ours!r}"]
    return judge_differences(identity, judge)


def undecided_reason(record: GradedRecord, rung: CertifiedRung, number: int) -> str | None:
    """None when rung `number` (1-based) decides this record of its judge, else why not:
    not a verdict, a rung certified to decide nothing, no confidence, or a confidence below
    the rung's threshold (a case is decided at or above it)."""
    if record.status not in VERDICTS:
        return f"{record.status} at rung {number}"
    if rung.threshold is None:
        return f"rung {number} is certified to decide nothing"
    if record.confidence is None:
        return f"no confidence at rung {number}"
    if record.confidence < rung.threshold:
        return (
            f"confidence {record.confidence:.3g} below rung {number}'s certified "
            f"threshold {rung.threshold:.3g}"
        )
    return None
