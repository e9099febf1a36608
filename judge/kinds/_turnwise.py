"""What the turn-by-turn conversation kinds share (turn_relevancy, knowledge_retention,
role_adherence): each assistant turn judged with a window of the messages before it.

One request a conversation: the payload lists each assistant turn that says something
(`turn` = its index in `messages`, `reply` = its text, `window` = up to `window` messages
before it, each with its index), and the verdict has one entry a listed turn:
`{"turns": [{"turn", "verdict": "pass" | "fail", "reason"}]}`. A reply that skips a turn,
invents one or judges one twice is a parse_error (sent back once for repair), never a grade.
Score = passing turns / turns; label `pass` when every turn passes, else `fail`; a
conversation with no assistant turn to judge is `abstained`. Every turn's verdict stays in
the record. The rules judge abstains: whether a reply fits its turn is a model's call.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from judge import lexical
from judge.kinds._base import (
    Abstain,
    Choice,
    KindStats,
    Scored,
    VerdictModel,
    ratio,
)
from judge.kinds._confidence import (
    LabelSite,
    all_pass_confidence,
    field_choices,
)
from judge.kinds._conversation import ConversationKind, shares_words, transcript
from judge.schemas import Case, GradedRecord
from judge.transcript import assistant_turns

if TYPE_CHECKING:
    from judge.rubric import Rubric

DEFAULT_WINDOW = 5


class TurnSpec(BaseModel):
    """`window`: how many messages before each assistant turn the judge is shown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window: int = Field(default=DEFAULT_WINDOW, ge=0, le=200)


class TurnVerdict(VerdictModel):
    turn: int
    verdict: Literal["pass", "fail"]
    reason: str


class TurnsVerdict(VerdictModel):
    turns: list[TurnVerdict]


@dataclass
class TurnStats(KindStats):
    """Conversations and turns: the share of conversations whose every turn passes, and
    the share of all turns that pass."""

    turns: int = 0
    passed: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    conversations: int = 0
    # each conversation's passed turns and turns, for the interval that resamples them
    clusters: list[tuple[int, int]] = field(default_factory=list)

    def add_ok(self, record: GradedRecord) -> None:
        verdicts = [t.get("verdict") for t in (record.verdict or {}).get("turns", [])]
        self.conversations += 1
        self.turns += len(verdicts)
        self.passed += verdicts.count("pass")
        self.labels[record.label or ""] += 1
        if verdicts:
            self.clusters.append((verdicts.count("pass"), len(verdicts)))

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "turn_pass_rate": ratio(self.passed, self.turns),
            **self._turn_interval(),
            "conversation_pass_rate": ratio(self.labels["pass"], self.conversations),
        }

    def _turn_interval(self) -> dict[str, float | None]:
        """The turn pass rate's 95% interval with conversations as clusters (a turn's
        verdict goes with its conversation's): Korn and Graubard's, which resamples
        conversations, not turns
        (:func:`calibration.inference.clusters.clustered_rate_interval`)."""
        from calibration.inference.clusters import ClusterMoments  # scipy: only when asked

        moments = ClusterMoments()
        for passed, turns in self.clusters:
            moments.add(passed, turns)
        found = moments.interval() or (None, None)
        return {"turn_pass_rate_ci95_low": _rounded(found[0]),
                "turn_pass_rate_ci95_high": _rounded(found[1])}  # fmt: skip


def _rounded(value: float | None) -> float | None:
    return None if value is None else ratio(value, 1.0)


def judged_turns(case: Case) -> list[int]:
    """The indices of the assistant turns a verdict must judge, in order."""
    return [index for index, _ in assistant_turns(case.messages or [])]


def turn_problem(expected: list[int], got: list[int]) -> str | None:
    """Why a verdict's turns are not exactly the listed ones, or None."""
    counts = Counter(got)
    missing = [t for t in expected if t not in counts]
    invented = sorted({t for t in got if t not in set(expected)})
    twice = sorted(t for t, n in counts.items() if n > 1)
    parts = [
        f"{what} {items}"
        for what, items in (("missing", missing), ("not listed", invented), ("twice", twice))
        if items
    ]
    if not parts:
        return None
    return f"judge exactly the listed turns {expected}, one entry each: " + "; ".join(parts)


class TurnwiseKind(ConversationKind):
    """A kind that judges each assistant turn in one request; subclasses set the name, the
    verdict name, the simulated test and the injection phrase."""

    spec_model = TurnSpec
    panel_combines = "score"  # a jury averages the share of passing turns (judge.jury.vote)
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "mean",
        "turns": "turns",
        "turn_pass_rate": "turns passed",
        "conversation_pass_rate": "all passed",
    }
    template_keys = """
# how many messages before each assistant turn the judge is shown
window: 5
"""

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return TurnsVerdict

    def window(self, rubric: Rubric) -> int:
        spec: TurnSpec = rubric.spec
        return spec.window

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["messages"]

    def payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        messages, size = case.messages or [], self.window(rubric)
        turns = []
        for index, message in assistant_turns(messages):
            start = max(0, index - size)
            window = transcript(messages[start:index], start)
            turns.append({"turn": index, "window": window, "reply": message.content})
        return {**self.context_payload(rubric, case), "turns": turns}

    def context_payload(self, rubric: Rubric, case: Case) -> dict[str, Any]:
        """What the judge reads besides the turns (role_adherence: the role)."""
        return {}

    def verdict_problem(self, rubric: Rubric, case: Case, verdict: BaseModel) -> str | None:
        assert isinstance(verdict, TurnsVerdict)
        return turn_problem(judged_turns(case), [t.turn for t in verdict.turns])

    def label_sites(self, rubric: Rubric, verdict: BaseModel) -> list[LabelSite]:
        """Each turn's `verdict`; `pass` needs every turn to pass (`all_pass_confidence`)."""
        allowed = field_choices(TurnVerdict, "verdict")
        turns = getattr(verdict, "turns", [])
        return [LabelSite(("turns", i, "verdict"), t.verdict, allowed) for i, t in enumerate(turns)]

    def label_confidence(
        self,
        rubric: Rubric,
        label: str | None,
        sites: list[LabelSite],
        dists: list[dict[Any, float]],
    ) -> float | None:
        return all_pass_confidence(dists, "pass", passed=label == "pass")

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        assert isinstance(verdict, TurnsVerdict)
        if not verdict.turns:
            return Scored("abstained")
        passed = sum(t.verdict == "pass" for t in verdict.turns)
        label = "pass" if passed == len(verdict.turns) else "fail"
        return Scored("ok", passed / len(verdict.turns), label)

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("pass", "every assistant turn passes", 1.0),
            Choice("fail", "at least one assistant turn fails", 0.0),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return TurnStats()

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        return Abstain(
            f"{self.name} needs a model judge: the rules judge cannot tell whether a reply "
            "fits its turn (give --model and --base-url)"
        )

    def passes(self, turn: dict[str, Any], payload: dict[str, Any]) -> bool:
        """The loopback server's stand-in judgement of one listed turn: the reply shares a
        word with its window."""
        window = [str(m.get("content") or "") for m in turn.get("window") or []]
        return not window or shares_words(str(turn.get("reply") or ""), window)

    def simulated_verdict(self, schema: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        """One entry per listed turn, so end-to-end runs parse."""
        entries = []
        for turn in payload.get("turns") or []:
            ok = isinstance(turn, dict) and self.passes(turn, payload)
            verdict = "pass" if ok else "fail"
            number = turn.get("turn") if isinstance(turn, dict) else None
            entries.append({"turn": number, "verdict": verdict, "reason": f"Simulated {verdict}."})
        return {"turns": entries}

    def recognises(self, fields: set[str], payload: dict[str, Any]) -> bool:
        return fields == {"turns"} or (not fields and "turns" in payload)

    def injection_target(self, rubric: Rubric, clean: GradedRecord) -> str | None:
        return "pass"

    def injection_goal(self, rubric: Rubric, target: str) -> str:
        return "every assistant turn passes"
