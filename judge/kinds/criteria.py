"""`criteria`: several criteria judged in ONE call, with weights and boolean penalties.

```yaml
kind: criteria
inputs: [question, contexts, answer, reference]
criteria:
  - {name: context_relevance, scale: {min: 1, max: 10}, weight: 0.3, inputs: [question, contexts]}
  - {name: answer_similarity, scale: {min: 1, max: 10}, weight: 0.4, inputs: [answer, reference]}
  - {name: faithfulness, scale: {min: 1, max: 10}, weight: 0.3, inputs: [contexts, answer]}
  - {name: hallucination, type: boolean, penalty: true, inputs: [contexts, answer]}
pass_at: 0.7
```
Verdict: one field per criterion, `{"rationale", "score": min..max}` for a scale and
`{"rationale", "value": true|false}` for a boolean, each typed by its scale so strict
schemas enforce the ranges. Score = weighted mean of (s - min) / (max - min) over the scale
criteria, times (1 - value) for each penalty; label `pass` when score >= pass_at, else
`fail`. The summary gives each criterion's mean (each boolean's rate), the pass rate, the
count of `fail` labels (`fails`), and, as the chunking benchmark names them,
`total_questions` (every record) and `failed_questions` (records that errored:
api_error or parse_error).

Flags: a criterion may set `good` and `warning` thresholds on its own scale, as the
chunking benchmark's interpretation guide does ("good >= 8", "warning < 6"). A scale's
mean is `good` when >= good, `warning` when < warning, `fair` in between; a boolean's rate
(lower is better) is `good` when <= good, `warning` when > warning, `fair` in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from judge import lexical
from judge.kinds._base import (
    Abstain,
    Choice,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    ratio,
)
from judge.kinds._confidence import (
    LabelSite,
    field_choices,
)
from judge.kinds._scales import Scale
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

CASE_INPUTS = ("question", "contexts", "answer", "reference")


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    description: str = ""
    type: Literal["scale", "boolean"] = "scale"
    scale: Scale | None = None
    weight: float = Field(default=1.0, gt=0.0)
    penalty: bool = False
    inputs: list[Literal["question", "contexts", "answer", "reference"]] = []
    good: float | None = None
    warning: float | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Criterion:
        if self.type == "scale" and self.scale is None:
            raise ValueError(f"criterion {self.name!r} needs a scale (or type: boolean)")
        if self.type == "boolean" and self.scale is not None:
            raise ValueError(f"boolean criterion {self.name!r} takes no scale")
        if self.penalty and self.type != "boolean":
            raise ValueError(f"penalty applies to boolean criteria only ({self.name!r})")
        return self._thresholds()

    def _thresholds(self) -> Criterion:
        """good/warning on the criterion's own scale (a rate for a boolean), in order."""
        low, high = (self.scale.min, self.scale.max) if self.scale else (0.0, 1.0)
        for name, value in (("good", self.good), ("warning", self.warning)):
            if value is not None and not low <= value <= high:
                raise ValueError(f"{self.name}: {name} {value} is outside {low}..{high}")
        if self.good is not None and self.warning is not None:
            higher_is_better = self.type == "scale"
            if (self.warning > self.good) if higher_is_better else (self.warning < self.good):
                side = "above" if higher_is_better else "below"
                raise ValueError(f"{self.name}: warning {self.warning} is {side} good {self.good}")
        return self


class CriteriaSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    criteria: list[Criterion] = Field(min_length=1, max_length=20)
    pass_at: float = Field(default=0.7, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _unique(self) -> CriteriaSpec:
        names = [c.name for c in self.criteria]
        if len(set(names)) != len(names):
            raise ValueError("criterion names must be unique")
        return self


def combine(spec: CriteriaSpec, values: dict[str, Any]) -> float:
    """The overall score from each criterion's value (the module docstring's formula)."""
    scaled = [c for c in spec.criteria if c.type == "scale" and c.scale is not None]
    total = sum(c.weight for c in scaled)
    score = 1.0
    if scaled:
        score = sum(c.weight * c.scale.normalise(values[c.name]) for c in scaled if c.scale) / total
    for c in spec.criteria:
        if c.penalty and values[c.name]:
            score *= 0.0
    return score


@dataclass
class CriteriaStats(KindStats):
    spec: CriteriaSpec
    sums: dict[str, float] = field(default_factory=dict)
    scored: int = 0
    passing: int = 0
    total: int = 0
    errored: int = 0

    def add_record(self, record: GradedRecord) -> None:
        self.total += 1
        self.errored += record.status in ("api_error", "parse_error")

    def add_ok(self, record: GradedRecord) -> None:
        self.scored += 1
        self.passing += record.label == "pass"
        for name, value in _values(self.spec, record.verdict or {}).items():
            self.sums[name] = self.sums.get(name, 0.0) + float(value)

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for c in self.spec.criteria:
            mean = ratio(self.sums.get(c.name, 0.0), self.scored)
            key = "rate" if c.type == "boolean" else "mean"
            out[c.name] = {key: mean, "flag": flag(c, mean)}
        return {
            "pass_rate": ratio(self.passing, self.scored),
            "fails": self.scored - self.passing,
            "total_questions": self.total,
            "failed_questions": self.errored,
            "criteria": out,
        }


def flag(criterion: Criterion, value: float | None) -> str | None:
    """`good`, `fair` or `warning` for a criterion's mean (a boolean's rate), by its
    thresholds (the module docstring); None when it sets none or nothing was scored."""
    if value is None or (criterion.good is None and criterion.warning is None):
        return None
    if criterion.type == "boolean":  # a rate: lower is better
        good = criterion.good is not None and value <= criterion.good
        warning = criterion.warning is not None and value > criterion.warning
    else:
        good = criterion.good is not None and value >= criterion.good
        warning = criterion.warning is not None and value < criterion.warning
    return "good" if good else "warning" if warning else "fair"


def _values(spec: CriteriaSpec, verdict: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for c in spec.criteria:
        part = verdict.get(c.name) or {}
        out[c.name] = part.get("value") if c.type == "boolean" else part.get("score")
    return {k: v for k, v in out.items() if v is not None}


def criteria_notes(summary: dict[str, Any]) -> list[str]:
    """Each criterion's mean (a boolean's rate) with its flag, and what `fails` and
    `failed_questions` count (they differ: a graded fail is no failed question)."""
    parts = []
    for name, figures in (summary.get("criteria") or {}).items():
        key = "rate" if "rate" in figures else "mean"
        value = figures.get(key)
        shown = "-" if value is None else f"{value:.3f}"
        flag_ = f" ({figures['flag']})" if figures.get("flag") else ""
        parts.append(f"  {name}: {key} {shown}{flag_}")
    lines = ["criteria, all cases:", *parts] if parts else []
    if "fails" in summary:
        lines.append(
            f"fails: {summary['fails']} graded below pass_at; failed_questions: "
            f"{summary.get('failed_questions', 0)} the judge could not grade (API or parse errors)"
        )
    return lines


class CriteriaKind(Kind):
    name = "criteria"
    panel_combines = "score"  # a jury averages scores (judge.jury.vote)
    verdict_name = "CriteriaVerdict"
    spec_model = CriteriaSpec
    columns: ClassVar[dict[str, str]] = {"mean_score": "overall", "pass_rate": "pass rate"}

    def summary_notes(self, summary: dict[str, Any]) -> list[str]:
        return criteria_notes(summary)

    template_inputs = "[question, contexts, answer]"
    template_keys = """
# several criteria judged in one call; overall = weighted mean of the scales, times
# (1 - value) for each boolean penalty; pass when overall >= pass_at
criteria:
  - {name: relevance, scale: {min: 1, max: 10}, weight: 0.5, inputs: [question, answer]}
  - {name: grounding, scale: {min: 1, max: 10}, weight: 0.5, inputs: [contexts, answer]}
  - {name: hallucination, type: boolean, penalty: true, inputs: [contexts, answer]}
pass_at: 0.7
"""

    def __init__(self) -> None:
        self._models: dict[str, type[BaseModel]] = {}

    def _spec(self, rubric: Rubric) -> CriteriaSpec:
        spec: CriteriaSpec = rubric.spec
        return spec

    def check(self, rubric: Rubric) -> list[str]:
        wanted = {i for c in self._spec(rubric).criteria for i in c.inputs}
        missing = sorted(wanted - set(rubric.inputs))
        return (
            [f"criteria read inputs {missing} that the rubric's inputs do not list"]
            if missing
            else []
        )

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        key = rubric.sha256 or rubric.ref
        if key not in self._models:
            fields: dict[str, Any] = {}
            for c in self._spec(rubric).criteria:
                part = _criterion_model(c)
                fields[c.name] = (part, ...)
            self._models[key] = create_model("CriteriaVerdict", __base__=VerdictModel, **fields)
        return self._models[key]

    def instructions(self, rubric: Rubric) -> str:
        lines = [rubric.system.strip(), "", "Judge each criterion on its own:"]
        for c in self._spec(rubric).criteria:
            reads = f" (from {', '.join(c.inputs)})" if c.inputs else ""
            if c.type == "boolean":
                lines.append(f"- {c.name}{reads}: true or false. {c.description}".rstrip())
            elif c.scale is not None:
                lines.append(
                    f"- {c.name}{reads}: {c.scale.min} to {c.scale.max}. {c.description}".rstrip()
                )
        lines.append("For each, a one-sentence rationale first. Reply with JSON only.")
        return "\n".join(lines)

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        spec = self._spec(rubric)
        values = _values(spec, verdict.model_dump(mode="json"))
        overall = combine(spec, values)
        return Scored("ok", overall, "pass" if overall >= spec.pass_at else "fail")

    def label_sites(self, rubric: Rubric, verdict: BaseModel) -> list[LabelSite]:
        """Each criterion's value (`score` on its scale, a boolean's `value`); the label's
        confidence is the product over them (`Kind.label_confidence`): the probability
        that the judge writes every criterion as it did, so the same overall score."""
        sites = []
        for c in self._spec(rubric).criteria:
            part = getattr(verdict, c.name, None)
            key = "value" if c.type == "boolean" else "score"
            if isinstance(part, BaseModel):
                allowed = field_choices(type(part), key)
                sites.append(LabelSite((c.name, key), getattr(part, key, None), allowed))
        return sites

    def choices(self, rubric: Rubric) -> list[Choice]:
        at = self._spec(rubric).pass_at
        return [Choice("pass", f"overall score at least {at:g}", 1.0), Choice("fail", "", 0.0)]

    def case_figures(self, rubric: Rubric, record: GradedRecord) -> dict[str, float]:
        """Each criterion's value on its own scale (a boolean as 0 or 1), as the summary's
        means are: `criteria.NAME`."""
        values = _values(self._spec(rubric), record.verdict or {})
        return {f"criteria.{name}": float(value) for name, value in values.items()}

    def new_stats(self, rubric: Rubric) -> KindStats:
        return CriteriaStats(spec=self._spec(rubric))

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        parts: dict[str, Any] = {}
        for c in self._spec(rubric).criteria:
            reads = set(c.inputs or rubric.inputs)
            signal = _rules_signal(reads, case, boolean=c.type == "boolean")
            if signal is None:
                return Abstain(
                    f"the rules judge has no lexical signal for criterion {c.name!r}; use a model judge"
                )
            share, how = signal
            rationale = f"Rules judge, a weak lexical signal: {how}."
            if c.type == "boolean":
                parts[c.name] = {"rationale": rationale, "value": share >= 0.5}
            elif c.scale is not None:
                parts[c.name] = {"rationale": rationale, "score": c.scale.from_share(share)}
        return self.verdict_model(rubric).model_validate(parts)

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "pass"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every criterion deserves the top score and nothing is hallucinated"


def _criterion_model(c: Criterion) -> type[BaseModel]:
    title = "".join(p.capitalize() for p in c.name.split("_"))
    if c.type == "boolean":
        return create_model(title, __base__=VerdictModel, rationale=(str, ...), value=(bool, ...))
    assert c.scale is not None
    return create_model(
        title, __base__=VerdictModel, rationale=(str, ...), score=(c.scale.field_type(), ...)
    )


def _rules_signal(reads: set[str], case: Case, *, boolean: bool) -> tuple[float, str] | None:
    """A share in 0..1 from word overlap between the inputs a criterion reads, and what
    it measured; for a boolean the share of unsupported claims (a hallucination flag)."""
    answer, contexts = case.answer or "", case.contexts
    if {"contexts", "answer"} <= reads and contexts:
        context = lexical.evidence_text(contexts)
        claims = [lexical.judge_claim(c, context)[1] for c in lexical.split_claims(answer)]
        supported = claims.count("supported")
        if boolean:
            unsupported = len(claims) - supported
            return float(unsupported > 0), f"{unsupported} of {len(claims)} claims unsupported"
        share = supported / len(claims) if claims else 1.0
        return share, f"{supported} of {len(claims)} claims supported by the contexts"
    if boolean:
        return None
    if {"answer", "reference"} <= reads and case.reference:
        f1 = lexical.token_f1(answer, case.reference)
        return f1, f"token F1 with the reference {f1:.2f}"
    if {"question", "contexts"} <= reads and contexts:
        found, terms = lexical.term_coverage(case.question or "", " ".join(contexts))
        return (found / terms if terms else 1.0), f"contexts use {found} of {terms} question terms"
    if {"question", "answer"} <= reads:
        found, terms = lexical.term_coverage(case.question or "", answer)
        return (found / terms if terms else 1.0), f"answer uses {found} of {terms} question terms"
    return None
