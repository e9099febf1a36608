"""`labels`: named classes whose meaning is all in the rubric file.

```yaml
kind: labels
inputs: [question, answer]
labels:
  - {name: compliant, description: "Follows the policy", score: 1.0}
  - {name: minor_issue, description: "A small slip", score: 0.5}
  - {name: violation, description: "Breaks the policy", score: 0.0}
pass_at: 1.0          # optional: the summary's pass rate counts score >= pass_at
```
Verdict `{"rationale", "label": one of the names}`; label = the name; score = its score.
The rules judge cannot choose among classes it knows only by their descriptions: it
abstains and says the kind needs a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from judge.kinds._base import (
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
from judge.schemas import NAME, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric


class LabelDef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME)
    description: str = ""
    score: float = Field(ge=0.0, le=1.0)


class LabelsSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    labels: list[LabelDef] = Field(min_length=2, max_length=50)
    pass_at: float | None = Field(default=None, ge=0.0, le=1.0)
    confidence_scale: ConfidenceScale | None = None  # the judge states its confidence

    @field_validator("labels")
    @classmethod
    def _unique(cls, labels: list[LabelDef]) -> list[LabelDef]:
        names = [label.name.lower() for label in labels]
        if len(set(names)) != len(names):
            raise ValueError("label names must be unique (case-insensitively)")
        return labels


@dataclass
class LabelsStats(ChoiceStats):
    passing: int = 0
    pass_at: float | None = None

    def add_ok(self, record: GradedRecord) -> None:
        super().add_ok(record)
        if self.pass_at is not None and record.score is not None:
            self.passing += record.score >= self.pass_at

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        out = super().figures(mean_score)
        if self.pass_at is not None:
            out["pass_rate"] = ratio(self.passing, self.scored)
        return out


class LabelsKind(Kind):
    name = "labels"
    verdict_name = "LabelsVerdict"
    spec_model = LabelsSpec
    label_field = "label"
    columns: ClassVar[dict[str, str]] = {"mean_score": "mean", "label_rates": "labels"}
    template_keys = """
# the classes the judge chooses from, each with what it means and its score on 0..1
labels:
  - {name: good, description: "Does what the rubric asks", score: 1.0}
  - {name: minor_issue, description: "A small slip", score: 0.5}
  - {name: bad, description: "Fails what the rubric asks", score: 0.0}
# optional: the summary's pass rate counts a score at least this high
pass_at: 1.0
"""

    def __init__(self) -> None:
        self._models: dict[str, type[BaseModel]] = {}

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        key = rubric.sha256 or rubric.ref
        if key not in self._models:
            names = tuple(label.name for label in self._spec(rubric).labels)
            self._models[key] = create_model(
                "LabelsVerdict",
                __base__=VerdictModel,
                rationale=(str, ...),
                label=(cast(Any, Literal.__getitem__(names)), ...),
                **confidence_fields(self._spec(rubric).confidence_scale),
            )
        return self._models[key]

    def _spec(self, rubric: Rubric) -> LabelsSpec:
        spec: LabelsSpec = rubric.spec
        return spec

    def instructions(self, rubric: Rubric) -> str:
        lines = [rubric.system.strip(), "", "Choose exactly one label:"]
        lines += [f"- {label.name}: {label.description}" for label in self._spec(rubric).labels]
        lines.append("Give a one-sentence rationale first, then the label. Reply with JSON only.")
        lines += confidence_instruction(self._spec(rubric).confidence_scale)
        return "\n".join(lines)

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        name = str(verdict.model_dump()["label"])
        scores = {label.name: label.score for label in self._spec(rubric).labels}
        return Scored("ok", scores[name], name)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [Choice(x.name, x.description, x.score) for x in self._spec(rubric).labels]

    def new_stats(self, rubric: Rubric) -> KindStats:
        spec = self._spec(rubric)
        return LabelsStats(names=[x.name for x in spec.labels], pass_at=spec.pass_at)

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return {"rationale", "label"} <= fields <= {"rationale", "label", "confidence"}

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        best = max(self._spec(rubric).labels, key=lambda label: label.score)
        return best.name

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return f"the only correct label is {target}"
