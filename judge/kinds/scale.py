"""`scale`: an integer scale whose whole meaning is in the rubric file.

```yaml
kind: scale
inputs: [question, answer]
scale: {min: 1, max: 5, pass_at: 4}
anchors: {1: "Rude or dismissive", 3: "Neutral", 5: "Warm and precise"}
```
Verdict `{"rationale", "score": min..max}`; score = (s - min) / (max - min); label = str(s).
The summary adds the mean on the scale and the pass rate (s >= pass_at). The rules judge
gives only a weak lexical signal (question-term coverage mapped onto the scale) and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, create_model, field_validator

from judge import lexical
from judge.kinds._base import (
    Abstain,
    Choice,
    ChoiceStats,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    ratio,
)
from judge.kinds._confidence import (
    ConfidenceScale,
    confidence_fields,
    confidence_instruction,
)
from judge.kinds._scales import PassScale
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric


class ScaleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scale: PassScale
    anchors: dict[int, str] = {}
    confidence_scale: ConfidenceScale | None = None  # the judge states its confidence

    @field_validator("anchors")
    @classmethod
    def _short(cls, anchors: dict[int, str]) -> dict[int, str]:
        return {k: v.strip() for k, v in anchors.items()}


@dataclass
class ScaleStats(ChoiceStats):
    passing: int = 0
    value_sum: float = 0.0
    pass_at: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        super().add_ok(record)
        value = int((record.verdict or {}).get("score", 0))
        self.value_sum += value
        self.passing += value >= self.pass_at

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {
            "mean_value": ratio(self.value_sum, self.scored),
            "pass_rate": ratio(self.passing, self.scored),
            **super().figures(mean_score),
        }


class ScaleKind(Kind):
    name = "scale"
    panel_combines = "score"  # a jury averages scores (judge.jury.vote)
    verdict_name = "ScaleVerdict"
    spec_model = ScaleSpec
    label_field = "score"
    columns: ClassVar[dict[str, str]] = {"mean_value": "mean", "pass_rate": "pass rate"}
    template_keys = """
# whole numbers from min to max; pass_at: the score from which an answer passes
scale: {min: 1, max: 5, pass_at: 4}
# what each point means (some or all of them); the judge is shown these
anchors:
  1: Fails completely
  3: Acceptable
  5: Excellent
"""

    def __init__(self) -> None:
        self._models: dict[str, type[BaseModel]] = {}

    def check(self, rubric: Rubric) -> list[str]:
        spec: ScaleSpec = rubric.spec
        stray = [k for k in spec.anchors if not spec.scale.min <= k <= spec.scale.max]
        return [f"anchors {stray} are outside the scale"] if stray else []

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        key = rubric.sha256 or rubric.ref
        if key not in self._models:
            spec: ScaleSpec = rubric.spec
            self._models[key] = create_model(
                "ScaleVerdict",
                __base__=VerdictModel,
                rationale=(str, ...),
                score=(spec.scale.field_type(), ...),
                **confidence_fields(spec.confidence_scale),
            )
        return self._models[key]

    def instructions(self, rubric: Rubric) -> str:
        spec: ScaleSpec = rubric.spec
        lines = [
            rubric.system.strip(),
            "",
            f"Score on a scale of {spec.scale.min} to {spec.scale.max}:",
        ]
        lines += [f"{point} = {text}" for point, text in sorted(spec.anchors.items())]
        lines.append("Give a one-sentence rationale first, then the score. Reply with JSON only.")
        lines += confidence_instruction(spec.confidence_scale)
        return "\n".join(lines)

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        spec: ScaleSpec = rubric.spec
        value = int(verdict.model_dump()["score"])
        return Scored("ok", spec.scale.normalise(value), str(value))

    def choices(self, rubric: Rubric) -> list[Choice]:
        spec: ScaleSpec = rubric.spec
        return [
            Choice(str(p), spec.anchors.get(p, ""), spec.scale.normalise(p))
            for p in spec.scale.points
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        spec: ScaleSpec = rubric.spec
        return ScaleStats(names=[str(p) for p in spec.scale.points], pass_at=spec.scale.passing)

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        spec: ScaleSpec = rubric.spec
        if not ({"question", "answer"} <= set(rubric.inputs)):
            return Abstain(
                "the rules judge scores a scale from question and answer only; use a model judge"
            )
        found, terms = lexical.term_coverage(case.question or "", case.answer or "")
        value = spec.scale.from_share(found / terms if terms else 1.0)
        rationale = (
            f"Rules judge, a weak lexical signal: the answer uses {found} of {terms} question "
            "terms, mapped onto the scale. It does not read meaning; use a model judge."
        )
        stated = {"confidence": None} if spec.confidence_scale else {}  # the rules state none
        return self.verdict_model(rubric)(rationale=rationale, score=value, **stated)

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return {"rationale", "score"} <= fields <= {"rationale", "score", "confidence"}

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        spec: ScaleSpec = rubric.spec
        return str(spec.scale.max)

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return f"the answer deserves the top score of {target}"
