"""`task_completion`: did the agent achieve what the user wanted, judged from the whole
transcript (tool calls and results included)?

Verdict `{"rationale", "label": completed | partial | not_completed, "turns": [int]}`,
`turns` the indices of the messages that show it (0-based, into the case's `messages`).
Score 1 / 0.5 / 0; the label is the outcome. The goal is the case's `goal`, else the first
user message. No word overlap can tell whether a goal was reached: the rules judge
abstains and says a model judge is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import Abstain, Choice, ChoiceStats, KindStats, Scored, VerdictModel
from judge.kinds._conversation import ConversationKind, goal_of, shares_words, transcript
from judge.schemas import Case, GradedRecord

if TYPE_CHECKING:
    from judge.rubric import Rubric

Completion = Literal["completed", "partial", "not_completed"]
COMPLETION_SCORE: dict[str, float] = {"completed": 1.0, "partial": 0.5, "not_completed": 0.0}
NEEDS_MODEL = (
    "task_completion needs a model judge: the rules judge cannot tell whether an agent "
    "achieved a goal (give --model and --base-url)"
)


class TaskCompletionVerdict(VerdictModel):
    rationale: str
    label: Completion
    turns: list[int]


class TaskCompletionKind(ConversationKind):
    name = "task_completion"
    verdict_name = "TaskCompletionVerdict"
    template_inputs = "[goal, messages]"
    label_field = "label"
    columns: ClassVar[dict[str, str]] = {"mean_score": "mean", "label_rates": "labels"}

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return TaskCompletionVerdict

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["messages"]  # the goal falls back to the first user message

    def payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        goal, source = goal_of(case)
        return {"goal": goal, "goal_source": source, "messages": transcript(case.messages)}

    def verdict_problem(self, rubric: Rubric, case: Case, verdict: BaseModel) -> str | None:
        assert isinstance(verdict, TaskCompletionVerdict)
        count = len(case.messages or [])
        wrong = sorted({t for t in verdict.turns if not 0 <= t < count})
        if wrong:
            return f"turns {wrong} are not message indices (0 to {count - 1})"
        return None

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, TaskCompletionVerdict)
        return Scored("ok", COMPLETION_SCORE[verdict.label], verdict.label)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("completed", "the agent achieved everything the user asked for", 1.0),
            Choice("partial", "the agent achieved part of it", 0.5),
            Choice("not_completed", "the agent did not achieve it", 0.0),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return ChoiceStats(names=list(COMPLETION_SCORE))

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        return Abstain(NEEDS_MODEL)

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        """The loopback server's answer: completed when the last assistant turn shares a
        word with the goal, partial when the assistant said something else, else not."""
        messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
        said = [m for m in messages if m.get("role") == "assistant" and m.get("content")]
        if not said:
            return {"rationale": "Simulated: no reply.", "label": "not_completed", "turns": []}
        last = said[-1]
        hit = shares_words(str(last["content"]), [str(payload.get("goal") or "")])
        label = "completed" if hit else "partial"
        return {"rationale": f"Simulated: {label}.", "label": label, "turns": [last["index"]]}

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return {"label", "turns"} <= fields or (not fields and "goal_source" in payload)

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "completed"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "the agent completed the user's goal and the label must be completed"
