"""Rules per tool in a `trajectory` rubric: which calls are compared, and how, before the
calls are paired (judge.kinds._matching, which this module leaves as it is).

```yaml
only: [book_reservation, cancel_reservation]   # compare only these tools, both sides
ignore: [get_user_details]                     # drop these tools, both sides
tools:
  transfer_to_human_agents: {arguments: ignore}
  calculate: {arguments: subset, ignore_keys: [expression]}
errors: skip      # a call whose tool result is an error does not count (default: count)
```
They apply in this order, each to what the one before left:
1. `errors: skip`: the agent's calls answered by an error (`error_of`) are left out (the
   expected calls have no results: nothing to skip there);
2. `only`: calls of other tools are left out, on both sides;
3. `ignore`: calls of these tools are left out, on both sides;
4. `tools.NAME.ignore_keys`: these argument keys are dropped from NAME's calls, both sides;
5. `tools.NAME.arguments`: NAME's calls are compared by this mode (exact | ignore |
   subset) instead of the rubric's `arguments:`.
Each call left out is named in the verdict's `left_out` with its side and the rule.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judge.kinds._matching import pair_calls
from judge.transcript import Call, Message, parse_arguments

ArgumentMode = Literal["exact", "ignore", "subset"]
ERROR_WORDS = ("error",)  # a result whose text starts so (any case) is an error


class ToolRule(BaseModel):
    """How one tool's calls are compared: its own argument mode, keys left out."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arguments: ArgumentMode | None = None
    ignore_keys: tuple[str, ...] = Field(default=(), max_length=1_000)


@dataclass(frozen=True)
class Dropped:
    """A call the rules left out: its side (`agent` | `expected`), and why."""

    call: Call
    side: str
    why: str


@dataclass
class Kept:
    """The calls left to compare, and what the rules took away."""

    actual: list[Call]
    expected: list[Call]
    dropped: list[Dropped] = field(default_factory=list)
    keys_dropped: dict[str, set[str]] = field(default_factory=dict)
    # where each kept call was in the lists given (the verdict's `paired` names those);
    # None: every call kept, in place
    actual_at: list[int] | None = None
    expected_at: list[int] | None = None

    def original(self, pairs: list[tuple[int, int]]) -> list[list[int]]:
        """The pairs as indexes into the lists given."""
        if self.actual_at is None or self.expected_at is None:
            return [[a, e] for a, e in pairs]
        return [[self.actual_at[a], self.expected_at[e]] for a, e in pairs]


def error_of(content: str | None) -> str | None:
    """The error a tool result reports, or None. An error is a result whose text starts
    with "error" (any case: tau-bench's `Error: ...`, a Python traceback's `Error`), or a
    JSON object with a true `error`, `is_error` or `isError` (MCP) member."""
    text = (content or "").strip()
    if text.lower().startswith(ERROR_WORDS):
        return text[:200]
    if text.startswith("{"):
        value = parse_arguments(text)
        if isinstance(value, dict):
            for key in ("error", "is_error", "isError"):
                if value.get(key):
                    return text[:200]
    return None


def call_errors(messages: Sequence[Message] | None) -> list[str | None]:
    """For each of the agent's calls, in order (as judge.transcript.agent_calls), the error
    its tool result reports, or None (no error, or no result with its id)."""
    results = {
        m.tool_call_id: m.content for m in messages or [] if m.role == "tool" and m.tool_call_id
    }
    return [
        error_of(results[call.id]) if call.id in results else None
        for message in messages or []
        for call in message.tool_calls or []
    ]


def apply_rules(
    actual: Sequence[Call],
    expected: Sequence[Call],
    *,
    only: Sequence[str] | None,
    ignore: Sequence[str],
    tools: dict[str, ToolRule],
    skip_errors: bool,
    errors: Sequence[str | None] | None = None,
) -> Kept:
    """Steps 1-4 of the module docstring, in that order."""
    if not (skip_errors or only is not None or ignore or tools):  # no rule: every call, as is
        return Kept(list(actual), list(expected))
    sides = {"agent": list(enumerate(actual)), "expected": list(enumerate(expected))}
    dropped: list[Dropped] = []

    def drop(side: str, why: Callable[[int, Call], str | None]) -> None:
        left = []
        for index, call in sides[side]:
            reason = why(index, call)
            if reason is None:
                left.append((index, call))
            else:
                dropped.append(Dropped(call, side, reason))
        sides[side] = left

    if skip_errors and errors is not None:
        failed = dict(enumerate(errors))
        drop("agent", lambda i, _c: _skipped(failed.get(i)))
    for side in ("agent", "expected"):
        if only is not None:
            drop(side, lambda _i, c: None if c.name in set(only) else "only: not listed")
        if ignore:
            drop(side, lambda _i, c: "ignore: listed" if c.name in set(ignore) else None)
    kept = Kept([c for _, c in sides["agent"]], [c for _, c in sides["expected"]], dropped)
    kept.actual_at = [i for i, _ in sides["agent"]]
    kept.expected_at = [i for i, _ in sides["expected"]]
    for name, rule in tools.items():
        if rule.ignore_keys:
            kept.actual = [_without_keys(c, name, rule.ignore_keys, kept) for c in kept.actual]
            kept.expected = [_without_keys(c, name, rule.ignore_keys, kept) for c in kept.expected]
    return kept


def _skipped(error: str | None) -> str | None:
    return None if error is None else f"errors: skip (the tool answered {error!r})"


def _without_keys(call: Call, name: str, keys: Sequence[str], kept: Kept) -> Call:
    if call.name != name or not isinstance(call.arguments, dict):
        return call
    gone = [k for k in keys if k in call.arguments]
    if not gone:
        return call
    kept.keys_dropped.setdefault(name, set()).update(gone)
    return Call(call.name, {k: v for k, v in call.arguments.items() if k not in keys})


def pair_by_tool(
    actual: Sequence[Call], expected: Sequence[Call], mode_of: Callable[[str], str], default: str
) -> list[tuple[int, int]]:
    """`pair_calls` with each tool's own argument mode: calls of different names never
    fit, so a maximum matching is the union of one per name (by expected index). Without
    a mode per tool it is `pair_calls` itself."""
    names = {c.name for c in expected}
    if all(mode_of(n) == default for n in names):
        return pair_calls(actual, expected, default)
    agent_at: dict[str, list[int]] = defaultdict(list)
    wanted_at: dict[str, list[int]] = defaultdict(list)
    for index, call in enumerate(actual):
        agent_at[call.name].append(index)
    for index, call in enumerate(expected):
        wanted_at[call.name].append(index)
    pairs: list[tuple[int, int]] = []
    for name, wanted in wanted_at.items():
        agent = agent_at.get(name, [])
        sub = pair_calls([actual[i] for i in agent], [expected[j] for j in wanted], mode_of(name))
        pairs.extend((agent[a], wanted[e]) for a, e in sub)
    return sorted(pairs, key=lambda pair: pair[1])


def describe_dropped(dropped: Sequence[Dropped]) -> list[dict[str, Any]]:
    """The verdict's `left_out`: each call left out, its side and the rule."""
    return [
        {"name": d.call.name, "arguments": d.call.arguments, "side": d.side, "why": d.why}
        for d in dropped
    ]


def describe_keys(keys_dropped: dict[str, set[str]]) -> list[str]:
    """A note per tool whose argument keys were left out of the comparison."""
    return [
        f"{name}: argument keys {json.dumps(sorted(keys))} left out (ignore_keys)"
        for name, keys in sorted(keys_dropped.items())
    ]
