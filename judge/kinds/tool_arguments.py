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
check against), and so does one whose agent made no call (0/0). Remote `$ref`s are never
fetched: a schema that needs one fails with that reason.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from judge import lexical
from judge.kinds._base import Abstain, Choice, Kind, KindStats, Scored, VerdictModel, ratio
from judge.schemas import Case, GradedRecord
from judge.transcript import Call, agent_calls

if TYPE_CHECKING:
    from judge.rubric import Rubric

NO_TOOLS = "no tools: no schema to check the calls' arguments against"
NO_CALLS = "the agent made no tool call: nothing to check"
MAX_ERRORS = 5  # errors kept per call: the first few say what is wrong
_VALIDATORS_KEPT = 256  # compiled schemas kept (cases of one set mostly share their tools)


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


class _Validators:
    """Compiled validators by schema text: compiling (and checking) a schema costs far more
    than validating one call with it, and the cases of a set share a few tools. The cache
    is functools' (thread-safe: a service may grade in several threads)."""

    def errors(self, schema: Any, arguments: dict[str, Any]) -> list[str]:
        try:
            validator = _compiled(json.dumps(schema, sort_keys=True))
            found = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
            return [_said(e) for e in found[:MAX_ERRORS]]
        except Exception as exc:  # noqa: BLE001 - a broken or remote schema is a finding
            return [f"the tool's schema cannot be used: {str(exc).splitlines()[0][:200]}"]


@functools.lru_cache(maxsize=_VALIDATORS_KEPT)
def _compiled(text: str) -> Any:
    """A checked validator of the schema written as `text` (the draft it names by
    `$schema`, else 2020-12). Raises SchemaError for a schema that is not one."""
    import jsonschema  # only this kind needs it

    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def _said(error: Any) -> str:
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"${where}: {error.message[:200]}"


def check_calls(
    calls: list[Call], schemas: dict[str, Any], validators: _Validators
) -> ToolArgumentsVerdict:
    """The verdict for one conversation's calls (the module docstring's rules)."""
    invalid: list[InvalidCall] = []
    unknown: list[str] = []
    for index, call in enumerate(calls):
        if call.name not in schemas:
            errors = [f"no tool named {call.name!r} in tools"]
            if call.name not in unknown:
                unknown.append(call.name)
        elif not isinstance(call.arguments, dict):
            errors = ["arguments are not a JSON object"]
        else:
            errors = validators.errors(schemas[call.name], call.arguments)
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

    def __init__(self) -> None:
        self._validators = _Validators()

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
        return check_calls(calls, tool_schemas(case.tools), self._validators)
