"""`tool_arguments`: each tool call's arguments validated against the tool's JSON schema.

No judge, no request, no cache (`needs_judge` False): computed from the case alone with
provenance `computed`.

```yaml
kind: tool_arguments
inputs: [messages, tools]
```
The agent's calls are the `tool_calls` of its assistant messages; each is looked up by name
in the case's `tools` (OpenAI function schemas, `{"type": "function", "function": {"name",
"parameters"}}`) and its arguments validated against `parameters` with the jsonschema
library (the draft the schema names by `$schema`, else 2020-12). With C calls, V of them
valid:

    score = V / C        label `valid` when V == C, else `invalid`

A call is invalid when its arguments break the schema, are not a JSON object (the text a
model wrote), or name a tool the case does not offer (listed in `unknown_tools`); each
invalid call is in the verdict with its errors. A case with no `tools` abstains (nothing to
check against), and so does one whose agent made no call (0/0).

Validation is bounded and closed (judge.kinds._bounded_schema): a `$ref` outside the schema
(a URL, a `file://` path) is never fetched or read, patterns run on RE2, and every call and
case has a budget of steps and time. A call the schema cannot check within those bounds is
counted invalid with one error that starts `not checkable:` and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import Abstain, Choice, Kind, KindStats, Scored, VerdictModel, ratio
from judge.kinds._bounded_schema import NotCheckable, Steps, schema_errors
from judge.schemas import Case, GradedRecord
from judge.transcript import MAX_ARGUMENT_DEPTH, Call, agent_calls

if TYPE_CHECKING:
    from judge.rubric import Rubric

NO_TOOLS = "no tools: no schema to check the calls' arguments against"
NO_CALLS = "the agent made no tool call: nothing to check"
MAX_ERRORS = 5  # errors kept per call: the first few say what is wrong
TOO_DEEP = f"arguments nest more than {MAX_ARGUMENT_DEPTH} levels deep: kept as text"
NOT_CHECKABLE = "not checkable"  # how an error that is the schema's, not the call's, starts


class InvalidCall(VerdictModel):
    index: int  # the call's place among the agent's calls, from 0
    name: str
    arguments: Any
    errors: list[str]


class ToolArgumentsVerdict(VerdictModel):
    calls: int
    valid: int
    share_valid: float
    invalid: list[InvalidCall]
    unknown_tools: list[str]


def tool_schemas(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """name -> parameters schema of each function in `tools` (a bare `{"name",
    "parameters"}` is read too); a function without parameters takes any object."""
    out: dict[str, Any] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out[function["name"]] = function.get("parameters") or {"type": "object"}
    return out


def check_calls(
    calls: list[Call], schemas: dict[str, Any], steps: Steps | None = None
) -> ToolArgumentsVerdict:
    """The verdict for one conversation's calls (the module docstring's rules); `steps`
    bounds the validation of all of them (judge.kinds._bounded_schema)."""
    steps = steps or Steps()
    invalid: list[InvalidCall] = []
    unknown: list[str] = []
    for index, call in enumerate(calls):
        if call.name not in schemas:
            errors = [f"no tool named {call.name!r} in tools"]
            if call.name not in unknown:
                unknown.append(call.name)
        elif not isinstance(call.arguments, dict):
            deep = _text_too_deep(call.arguments, MAX_ARGUMENT_DEPTH)
            errors = [TOO_DEEP if deep else "arguments are not a JSON object"]
        else:
            errors = _errors(schemas[call.name], call.arguments, steps)
        if errors:
            invalid.append(
                InvalidCall.model_construct(
                    index=index, name=call.name, arguments=call.arguments, errors=errors
                )
            )
    valid = len(calls) - len(invalid)
    return ToolArgumentsVerdict.model_construct(
        calls=len(calls),
        valid=valid,
        share_valid=valid / len(calls),
        invalid=invalid,
        unknown_tools=unknown,
    )


def _errors(schema: Any, arguments: dict[str, Any], steps: Steps) -> list[str]:
    try:
        return schema_errors(schema, arguments, steps, MAX_ERRORS)
    except NotCheckable as exc:
        return [f"{NOT_CHECKABLE}: {exc}"]


@dataclass
class ToolArgumentsStats(KindStats):
    """Calls and valid calls over all scored cases: the call-level share valid."""

    calls: int = 0
    valid: int = 0

    def add_ok(self, record: GradedRecord) -> None:
        verdict = record.verdict or {}
        self.calls += int(verdict.get("calls") or 0)
        self.valid += int(verdict.get("valid") or 0)

    def figures(self, mean_score: float | None) -> dict[str, Any]:
        return {"calls": self.calls, "call_share_valid": ratio(self.valid, self.calls)}


class ToolArgumentsKind(Kind):
    name = "tool_arguments"
    verdict_name = "ToolArgumentsVerdict"
    answer_fields = ()  # it checks tool calls, not an answer: the probes refuse it
    needs_judge = False
    computed_off_loop = True  # the schemas come from the case: bounded, but not instant
    columns: ClassVar[dict[str, str]] = {
        "mean_score": "share valid",
        "calls": "calls",
        "call_share_valid": "valid calls",
    }
    template_inputs = "[messages, tools]"
    template_keys = """
# computed from the case alone (no judge): each tool call's arguments validated against
# its tool's JSON schema in the case's tools (OpenAI function schemas). No keys to set.
"""

    def verdict_model(self, rubric: Rubric) -> type[BaseModel]:
        return ToolArgumentsVerdict

    def required_inputs(self, rubric: Rubric) -> list[str]:
        return ["messages"]  # a case without tools abstains, it is not bad input

    def missing_inputs(self, rubric: Rubric, case: Case) -> list[str]:
        return ["messages"] if case.messages is None else []

    def score(self, rubric: Rubric, verdict: BaseModel) -> Scored:
        calls, valid = getattr(verdict, "calls", 0), getattr(verdict, "valid", 0)
        return Scored("ok", valid / calls, "valid" if valid == calls else "invalid")

    def choices(self, rubric: Rubric) -> list[Choice]:
        return [
            Choice("valid", "every call's arguments fit its tool's schema", 1.0),
            Choice("invalid", "at least one call does not (or names an unknown tool)", 0.0),
        ]

    def new_stats(self, rubric: Rubric) -> KindStats:
        return ToolArgumentsStats()

    def rules_verdict(
        self, rubric: Rubric, case: Case, *, budget: lexical.Budget | None = None
    ) -> BaseModel | Abstain:
        if case.tools is None:
            return Abstain(NO_TOOLS)
        calls = agent_calls(case.messages)
        if not calls:
            return Abstain(NO_CALLS)
        return check_calls(calls, tool_schemas(case.tools), Steps(budget))


def _text_too_deep(text: str, limit: int) -> bool:
    """`calibration.io.jsontext.text_too_deep`, imported on use: `judge --help` and `judge
    rubrics` import nothing of calibration (tests/e2e/test_startup.py)."""
    from calibration.io.jsontext import text_too_deep

    return bool(text_too_deep(text, limit))
