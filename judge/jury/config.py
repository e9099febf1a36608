"""JURY.yaml: the jurors of a panel and the rule their votes combine by.

```yaml
rule: majority            # labels: majority (strict, of the whole panel) | plurality | unanimity
scores: mean              # scores: mean | median (with their spread)
min_votes: 2              # default: a majority of the panel (floor(k / 2) + 1)
mode: full                # full: every juror grades every case | cyclic: one juror a case
                          # | escalate: the first juror, the rest where it is unsure
                          # | cascade: each juror a rung of a certificate (--certificate)
overlap: 0.1              # cyclic: a share (0 < s < 1) or a count of cases every juror grades
escalate: {margin: 0.1, labels: [minor_issue], min_confidence: 0.7}   # escalate: when
jurors:
  - {name: a, model: gpt-4o-2024-08-06, base_url: https://api.openai.com/v1,
     api_key_env: OPENAI_API_KEY, concurrency: 8, sampling: {temperature: 0, seed: 1}}
  - {name: b, model: claude-3-5-sonnet-20241022, base_url: ..., weight: 2,
     concurrency: auto, rpm: 500, price: {input: 3.0, output: 15.0}}
```
Each juror is a single judge with its own endpoint, key, concurrency (a number, or `auto`:
learnt from its endpoint) and sampling, and the `rpm` / `tpm` caps of its endpoint (when
not given, the command line's), and its `price` (USD per million tokens; when not given,
`--price-input/--price-output`, else the list price). Every other option the command line
gives is each juror's default: `--max-tokens`, `--temperature`, `--top-p` and `--seed`
under its `sampling`, `--concurrency`, `--rpm`, `--tpm` and `--base-url` beside them (the
jury file's own value wins); timeouts, retries, output mode and cache apply to every juror.
`--model` and `--offline` are refused with `--jury` (each juror names its model).

`mode: cyclic` costs one judge: each case goes to one juror, chosen from the case's id
(`judge.jury.plan`), except the `overlap` cases, which every juror grades and on which the
panel's agreement is measured. `mode: escalate` asks the first juror of the file (put the
cheapest first) about every case and the others only where its verdict is unsure
(`judge.jury.escalate`). `mode: cascade` grades under a certificate (`judge grade
--certificate CERT.json`, judge.engine.cascade): the jurors are its rungs in the file's
order (cheapest first); a juror is asked only about the cases the rungs before it did
not decide at their certified thresholds, and the cases no rung decides are escalated to
people. There is no vote: each case is decided by one rung.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StrictFloat,
    StrictInt,
    ValidationError,
    model_validator,
)

from judge.config import Concurrency, JudgeConfig, is_openai
from judge.errors import UsageError
from judge.schemas import NAME

LabelRule = Literal["majority", "plurality", "unanimity"]
ScoreRule = Literal["mean", "median"]
Mode = Literal["full", "cyclic", "escalate", "cascade"]
# an integer is a count of cases; a float strictly between 0 and 1 a share of them
Overlap = Annotated[StrictInt, Field(ge=0)] | Annotated[StrictFloat, Field(gt=0.0, lt=1.0)]


class Sampling(BaseModel):
    """How a juror samples: what JudgeConfig calls temperature, top_p, seed, max_tokens.
    Only the fields the file sets are the juror's own; the rest come from the command line
    (or the served judge), whose defaults are these (`juror_config`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = 42
    max_tokens: int = Field(default=1024, ge=16, le=32768)


class Price(BaseModel):
    """What a juror's tokens cost: USD per million prompt (`input`) and completion
    (`output`) tokens, as `--price-input` / `--price-output`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0.0, lt=1e6)
    output: float = Field(ge=0.0, lt=1e6)


class Escalation(BaseModel):
    """When the first juror's verdict is unsure (judge.jury.escalate): a score within
    `margin` of the kind's threshold (kinds whose scores decide), one of `labels`, or a
    verdict `confidence` field below `min_confidence`; a failed or abstained case always."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    margin: float = Field(default=0.1, ge=0.0, le=1.0)
    labels: tuple[str, ...] = ()
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class Juror(BaseModel):
    """One judge of the panel."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME)
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: Concurrency = 16
    rpm: int | None = Field(default=None, ge=1)  # None: the command line's --rpm
    tpm: int | None = Field(default=None, ge=1)  # None: the command line's --tpm
    sampling: Sampling = Sampling()
    weight: float = Field(default=1.0, gt=0.0)
    price: Price | None = None  # None: the command line's, else the list price (pricing.py)


class Jury(BaseModel):
    """A panel: two or more jurors with distinct names, and the vote rules."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    jurors: tuple[Juror, ...] = Field(min_length=2)
    rule: LabelRule = "majority"
    scores: ScoreRule = "mean"
    min_votes: int | None = Field(default=None, ge=1)
    mode: Mode = "full"
    overlap: Overlap | None = None  # cyclic only; default there: 0.1
    escalate: Escalation | None = None  # escalate only; default there: Escalation()

    @model_validator(mode="after")
    def _check(self) -> Jury:
        if self.overlap is not None and self.mode != "cyclic":
            raise ValueError(f"overlap is for mode: cyclic, not mode: {self.mode}")
        if self.escalate is not None and self.mode != "escalate":
            raise ValueError(f"escalate is for mode: escalate, not mode: {self.mode}")
        names = [j.name for j in self.jurors]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"juror names must be distinct, repeated: {twice}")
        if self.min_votes is not None and self.min_votes > len(self.jurors):
            raise ValueError(f"min_votes {self.min_votes} exceeds the {len(self.jurors)} jurors")
        return self

    @property
    def quorum(self) -> int:
        """The votes a case needs: `min_votes`, else a majority of the panel."""
        return self.min_votes or len(self.jurors) // 2 + 1

    @property
    def escalation(self) -> Escalation:
        """When the first juror's verdict is unsure: the file's rule, else the defaults."""
        return self.escalate or Escalation()

    @property
    def overlap_share(self) -> int | float:
        """The cyclic overlap: the file's, else a tenth of the cases."""
        return 0.1 if self.overlap is None else self.overlap


def load_jury(path: Path) -> Jury:
    """Read and validate JURY.yaml; a problem is a UsageError naming the file and field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the jury file: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not valid YAML: {exc}") from None
    try:
        return Jury.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"{path}: {problems}") from None


def juror_config(juror: Juror, base: JudgeConfig, env: Mapping[str, str]) -> JudgeConfig:
    """The juror's judge config: its model and key, and whatever else the jury file gives
    it (endpoint, concurrency, rate caps, each `sampling` field), over `base`: the command
    line's (or a served judge's) options are the default of every juror for what its file
    leaves out, so `--max-tokens 96` reaches a juror whose file names no `max_tokens`.
    Timeouts, retries, output mode and cache are always `base`'s. The key: `juror_key`."""
    base_url = juror.base_url or base.base_url
    given = juror.model_fields_set
    return base.model_copy(
        update={
            "model": juror.model,
            "base_url": base_url,
            "api_key": juror_key(juror, base, base_url, env),
            "concurrency": juror.concurrency if "concurrency" in given else base.concurrency,
            "rpm": juror.rpm if juror.rpm is not None else base.rpm,
            "tpm": juror.tpm if juror.tpm is not None else base.tpm,
            # only the fields the file sets: the rest are base's (a flag's, else the default)
            **juror.sampling.model_dump(exclude_unset=True),
        }
    )


def juror_key(
    juror: Juror, base: JudgeConfig, base_url: str | None, env: Mapping[str, str]
) -> SecretStr | None:
    """The key a juror is sent: the one its `api_key_env` names, and no other. With no
    `api_key_env`, the command line's key (`$OPENAI_API_KEY`) only when the juror's
    endpoint is OpenAI's own (https to api.openai.com): a juror at any other host gets no
    key, so one provider's key never reaches another's server."""
    if juror.api_key_env:
        key = env.get(juror.api_key_env)
        if not key:
            raise UsageError(f"juror {juror.name!r}: ${juror.api_key_env} is not set")
        return SecretStr(key)
    return base.api_key if is_openai(base_url) else None
