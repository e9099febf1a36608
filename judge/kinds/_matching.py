"""Pairing an agent's tool calls with the calls it was expected to make.

A call of the agent `a` can stand for an expected call `e` when the names are equal and the
arguments agree by the rubric's mode:

    exact    a.arguments == e.arguments as JSON (key order ignored, 5 == 5.0)
    ignore   always (the name alone decides)
    subset   every key of e.arguments is in a.arguments with a JSON-equal value

Arguments that are not a JSON object (the text a model wrote, kept as text) agree with
nothing under `exact` and `subset`: malformed arguments can only mismatch.

`pair_calls` returns a maximum matching: the most pairs (a, e), each call used at most
once. Under `exact` and `ignore` "can stand for" is an equivalence, so pairing each expected
call with the first free agent call of its class is already maximum (linear time). Under
`subset` it is not (a call with more keys fits more expected calls), so a greedy pairing can
fall short: a maximum bipartite matching (scipy's linear_sum_assignment on the 0/1 fit
matrix, one name at a time) is used instead.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Hashable, Sequence
from typing import Any

from judge.transcript import Call, canonical, json_equal

ARGUMENT_MODES = ("exact", "ignore", "subset")
_EXACT = 2**53  # integers below this in size are floats exactly; larger ones: canonical


def frozen(value: Any) -> Hashable:
    """A JSON value as a hashable key where equal JSON (`transcript.canonical`: key order
    ignored, numbers by value, booleans apart from numbers) gives an equal key, in one pass
    (this runs for every call of every case: benchmarks/trajectory.md). An object is a
    frozenset of its items, an array a tagged tuple, a number `("n", float)`: no two kinds
    of value share a key."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is dict:
        return frozenset([(k, frozen(v)) for k, v in value.items()])
    if kind is list:
        return ("[", tuple([frozen(v) for v in value]))
    if kind is float and math.isfinite(value):
        return ("n", value)
    if kind is int and -_EXACT < value < _EXACT:  # exactly a float: 5 keys as 5.0
        return ("n", float(value))
    return frozen_slowly(canonical(value))  # subclasses and tuples: the general rules


def frozen_slowly(value: Any) -> Hashable:
    """`frozen` of an already canonical value of any (sub)class."""
    if isinstance(value, dict):
        return frozenset((str(k), frozen_slowly(v)) for k, v in value.items())
    if isinstance(value, list):
        return ("[", tuple(frozen_slowly(v) for v in value))
    return value  # str, bool, None, or ("n", number)


def arguments_key(arguments: Any) -> Hashable | None:
    """The key of arguments under `exact`, or None for text that is not a JSON object."""
    if not isinstance(arguments, dict):
        return None
    return frozen(arguments)


def fits(actual: Call, expected: Call, mode: str) -> bool:
    """Whether the agent's call `actual` can stand for `expected` (module docstring)."""
    if actual.name != expected.name:
        return False
    if mode == "ignore":
        return True
    if not isinstance(actual.arguments, dict) or not isinstance(expected.arguments, dict):
        return False
    if mode == "exact":
        return json_equal(actual.arguments, expected.arguments)
    return all(
        key in actual.arguments and json_equal(actual.arguments[key], value)
        for key, value in expected.arguments.items()
    )


def pair_calls(
    actual: Sequence[Call], expected: Sequence[Call], mode: str
) -> list[tuple[int, int]]:
    """A maximum matching as (agent call index, expected call index) pairs, by expected
    index. Deterministic: under `exact`/`ignore` each expected call takes the earliest free
    agent call that fits."""
    if mode == "subset":
        return _pair_by_assignment(actual, expected)
    free: dict[Hashable, deque[int]] = defaultdict(deque)
    wanted = {call.name for call in expected}
    for index, call in enumerate(actual):
        key = _class_key(call, mode) if call.name in wanted else None  # it fits nothing
        if key is not None:
            free[key].append(index)
    pairs = []
    for index, call in enumerate(expected):
        key = _class_key(call, mode)
        waiting = free.get(key) if key is not None else None
        if waiting:
            pairs.append((waiting.popleft(), index))
    return pairs


def _class_key(call: Call, mode: str) -> Hashable | None:
    if mode == "ignore":
        return call.name
    key = arguments_key(call.arguments)
    return None if key is None else (call.name, key)


def _pair_by_assignment(actual: Sequence[Call], expected: Sequence[Call]) -> list[tuple[int, int]]:
    """Maximum matching under `subset`, name by name (calls of different names never fit)."""
    by_name: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for index, call in enumerate(actual):
        by_name[call.name][0].append(index)
    for index, call in enumerate(expected):
        by_name[call.name][1].append(index)
    pairs: list[tuple[int, int]] = []
    for agent, wanted in by_name.values():
        if agent and wanted:
            pairs.extend(
                _assign([actual[i] for i in agent], [expected[j] for j in wanted], agent, wanted)
            )
    return sorted(pairs, key=lambda pair: pair[1])


def _assign(
    actual: list[Call], expected: list[Call], agent: list[int], wanted: list[int]
) -> list[tuple[int, int]]:
    """The most (agent, expected) pairs that fit, from the 0/1 fit matrix: an assignment
    maximising the number of fitting pairs is a maximum bipartite matching."""
    fit = [[fits(a, e, "subset") for e in expected] for a in actual]
    if all(all(row) for row in fit):  # everything fits everything: any pairing is maximum
        return list(zip(agent, wanted, strict=False))
    import numpy as np
    from scipy.optimize import linear_sum_assignment  # only this mode needs scipy

    rows, cols = linear_sum_assignment(np.array(fit, dtype=float), maximize=True)
    return [(agent[r], wanted[c]) for r, c in zip(rows, cols, strict=True) if fit[r][c]]
