"""`trajectory`: the agent's tool calls, in order, against the calls it was expected to make.

No judge, no request, no cache (`needs_judge` False): the verdict is computed from the case
alone, whichever judge is configured, with provenance `computed`.

```yaml
kind: trajectory
inputs: [messages, expected_tool_calls]
match: superset        # strict | unordered | subset | superset (default superset)
arguments: exact       # exact | ignore | subset (default exact)
```
The agent's calls are the `tool_calls` of its assistant messages, in order; the expected
ones are the case's `expected_tool_calls`. A call fits an expected one when the names are
equal and the arguments agree by `arguments:` (judge.kinds._matching). With A the agent's
calls, E the expected ones and M a maximum matching of fitting pairs (each call used once):

    strict     len(A) == len(E) and A[i] fits E[i] for every i (the same sequence)
    unordered  |M| == len(A) == len(E)      (the same multiset)
    subset     |M| == len(A)                (every call the agent made was expected)
    superset   |M| == len(E)                (every expected call was made)

    precision = |M| / len(A)    recall = |M| / len(E)    (null when the count is 0)

Score 1.0 with label `match` when the mode holds, else 0.0 `mismatch`. The verdict names
the `missing` expected calls and the `unexpected` agent calls (those left out of M), so a
mismatch says what to look at; under `strict` a trajectory with the right calls in the
wrong order says so in `notes`. A case with no `expected_tool_calls` abstains with that
reason (nothing to compare with); `expected_tool_calls: []` means "no call expected":
under `superset` it is met by any trajectory (vacuously: there is no expected call to
miss), and the verdict notes the calls made where none was expected.

Rules per tool (`only`, `ignore`, `tools: {NAME: {arguments, ignore_keys}}`, `errors:
skip`; judge.kinds._tool_rules) decide which calls are compared and how, before the
pairing; the verdict's counts are of the calls compared and `left_out` names each call
the rules took away, with its side and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from judge import lexical
from judge.kinds._base import (
    Abstain,
    Choice,
    Kind,
    KindStats,
    Scored,
    VerdictModel,
    numbers_of,
    ratio,
)
from judge.kinds._matching import TooManyPairs, fits, pair_calls
from judge.kinds._tool_rules import (
    ToolRule,
    apply_rules,
    call_errors,
    describe_dropped,
    describe_keys,
    pair_by_tool,
)
from judge.schemas import Case, GradedRecord
from judge.transcript import Call, agent_calls, expected_calls

if TYPE_CHECKING:
    from judge.rubric import Rubric

MatchMode = Literal["strict", "unordered", "subset", "superset"]
ArgumentMode = Literal["exact", "ignore", "subset"]
ErrorRule = Literal["count", "skip"]
NO_EXPECTED = "no expected_tool_calls: nothing to compare the agent's calls with"


class TrajectorySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    match: MatchMode = "superset"
    arguments: ArgumentMode = "exact"
    only: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    tools: dict[str, ToolRule] = Field(default_factory=dict)
    errors: ErrorRule = "count"

    def mode_of(self, name: str) -> str:
        """The argument mode of one tool's calls: its own, else the rubric's."""
        rule = self.tools.get(name)
        return rule.arguments if rule and rule.arguments else self.arguments


class CallItem(VerdictModel):
    """A call named in a verdict: its name and arguments (an object, or the text the
    model wrote when that was not a JSON object)."""

    name: str
    arguments: Any


class LeftOutItem(VerdictModel):
    """A call the rubric's rules left out of the comparison: its side and the rule."""

    name: str
    arguments: Any
    side: Literal["agent", "expected"]
    why: str


class TrajectoryVerdict(VerdictModel):
    match: MatchMode
    arguments: ArgumentMode
    matched: bool
    agent_calls: int
    expected_calls: int
    paired_calls: int
    precision: float | None
    recall: float | None
    missing: list[CallItem]
    unexpected: list[CallItem]
    notes: list[str]
    left_out: list[LeftOutItem] = Field(default_factory=list)
    # [agent call index, expected call index] of each pair the matching made, indexes into
    # the case's own lists (the agent's calls in order, expected_tool_calls): the viewer's
    # calls table pairs the calls so
    paired: list[list[int]] = Field(default_factory=list)


def trajectory_verdict(
    actual: list[Call],
    expected: list[Call],
    spec: TrajectorySpec,
    *,
    errors: list[str | None] | None = None,
) -> TrajectoryVerdict:
    """The verdict for one conversation (the module docstring's rules). `errors`: for each
    of the agent's calls, the error its tool result reported, or None (`errors: skip`)."""
    kept = apply_rules(
        actual,
        expected,
        only=spec.only,
        ignore=spec.ignore,
        tools=spec.tools,
        skip_errors=spec.errors == "skip",
        errors=errors,
    )
    actual, expected = kept.actual, kept.expected
    if spec.tools:  # a tool of its own argument mode: the pairing is made name by name
        pairs = pair_by_tool(actual, expected, spec.mode_of, spec.arguments)
    else:
        pairs = pair_calls(actual, expected, spec.arguments)
    paired_agent = {a for a, _ in pairs}
    paired_expected = {e for _, e in pairs}
    matched = _holds(spec, actual, expected, len(pairs))
    notes = _notes(spec, actual, expected, len(pairs), matched)
    if kept.keys_dropped:
        notes.extend(describe_keys(kept.keys_dropped))
    return TrajectoryVerdict.model_construct(
        match=spec.match,
        arguments=spec.arguments,
        matched=matched,
        agent_calls=len(actual),
        expected_calls=len(expected),
        paired_calls=len(pairs),
        precision=len(pairs) / len(actual) if actual else None,
        recall=len(pairs) / len(expected) if expected else None,
        missing=[_item(c) for i, c in enumerate(expected) if i not in paired_expected],
        unexpected=[_item(c) for i, c in enumerate(actual) if i not in paired_agent],
        notes=notes,
        left_out=[LeftOutItem.model_construct(**d) for d in describe_dropped(kept.dropped)]
        if kept.dropped
        else [],
        paired=kept.original(pairs),
    )


def _notes(
    spec: TrajectorySpec, actual: list[Call], expected: list[Call], paired: int, matched: bool
) -> list[str]:
    """What the verdict notes beside its counts: the right calls in the wrong order
    (strict), arguments that are not JSON, calls made where none was expected."""
    notes = []
    if spec.match == "strict" and not matched and paired == len(actual) == len(expected):
        notes.append("the expected calls, each made, but in another order")
    if spec.tools:
        texts = sum(
            not isinstance(c.arguments, dict) and spec.mode_of(c.name) != "ignore" for c in actual
        )
    else:
        texts = (
            0
            if spec.arguments == "ignore"
            else sum(not isinstance(c.arguments, dict) for c in actual)
        )
    if texts:
        notes.append(f"{texts} call(s) with arguments that are not a JSON object: they fit none")
    if not expected and actual:
        notes.append(f"no call was expected; the agent made {len(actual)}")
    return notes


def _holds(spec: TrajectorySpec, actual: list[Call], expected: list[Call], paired: int) -> bool:
    if spec.match == "strict":
        return len(actual) == len(expected) and all(
            fits(a, e, spec.mode_of(e.name)) for a, e in zip(actual, expected, strict=True)
        )
    if spec.match == "unordered":
        return paired == len(actual) == len(expected)
    if spec.match == "subset":
        return paired == len(actual)
    return paired == len(expected)


def _item(call: Call) -> CallItem:
    return CallItem.model_construct(name=call.name, arguments=call.arguments)


@dataclass
class TrajectoryStats(KindStats):
    """Mean precision and recall over the scored cases where each is defined, and the
    missing and unexpected calls counted over all of them."""

    sums: dict[str, float]
    counts: dict[str, int]
    missing: int = 0
    unexpected: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        verdict = record.verdict or {}
        for name, value in numbers_of(verdict, ("precision", "recall")).items():
            self.sums[name] += value
            self.counts[name] += 1
        self.missing += len(verdict.get("missing") or [])
        self.unexpected += len(verdict.get("unexpected") or [])

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        means = {n: ratio(self.sums[n], self.counts[n]) for n in ("precision", "recall")}
        return {**means, "missing_calls": self.missing, "unexpected_calls": self.unexpected}


class TrajectoryKind(Kind):
    name = "trajectory"
    verdict_name = "TrajectoryVerdict"
    spec_model = TrajectorySpec
    answer_fields = ()  # it grades tool calls, not an answer: the probes refuse it
    needs_judge = False
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "match rate",
        "precision": "precision",
        "recall": "recall",
        "missing_calls": "missing",
    }
    template_inputs = "[messages, expected_tool_calls]"
    template_keys = """
# computed from the case alone (no judge): the agent's tool calls (assistant tool_calls,
# in order) against the case's expected_tool_calls.
# the modes of match: strict (the same sequence) | unordered (the same multiset) | subset
#   (every call the agent made was expected) | superset (every expected call was made)
# match: superset
# the modes of arguments: exact (JSON-equal) | ignore (names only) | subset (the expected
#   keys, equal)
# arguments: exact
# rules per tool, applied in this order before the comparison (docs/guides/conversations.md):
# errors: skip                  # count (default) | skip: a call answered by an error does not count
# only: [book_reservation]      # compare only these tools, both sides
# ignore: [get_user_details]    # drop these tools, both sides
# tools: {calculate: {arguments: subset, ignore_keys: [expression]}}
"""

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return TrajectoryVerdict

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["messages"]  # a case without expected calls abstains, it is not bad input

    def missing_inputs(self, rubric: Rubric, case: Case) -> list[str]:
        return ["messages"] if case.messages is None else []

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        matched = bool(getattr(verdict, "matched", False))
        return Scored("ok", 1.0 if matched else 0.0, "match" if matched else "mismatch")

    def case_figures(self, rubric: Rubric, record: GradedRecord) -> dict[str, float]:
        return numbers_of(record.verdict or {}, ("precision", "recall"))

    def choices(self, rubric: Rubric) -> list[Choice]:
        mode = self._spec(rubric).match
        return [
            Choice("match", f"the agent's calls match the expected ones ({mode})", 1.0),
            Choice("mismatch", f"they do not ({mode})", 0.0),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        names = ("precision", "recall")
        return TrajectoryStats(sums=dict.fromkeys(names, 0.0), counts=dict.fromkeys(names, 0))

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        if case.expected_tool_calls is None:
            return Abstain(NO_EXPECTED)
        spec = self._spec(rubric)
        actual = agent_calls(case.messages)
        errors = call_errors(case.messages) if spec.errors == "skip" else None
        try:
            return trajectory_verdict(
                actual, expected_calls(case.expected_tool_calls), spec, errors=errors
            )
        except TooManyPairs as exc:
            return Abstain(f"not matched: {exc}")

    def _spec(self, rubric: Rubric) -> TrajectorySpec:
        spec: TrajectorySpec = rubric.spec
        return spec
