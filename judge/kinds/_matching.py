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
fall short: a maximum bipartite matching is used instead, one name at a time: the fit
matrix built with numpy (`subset_fit_matrix`), then Hopcroft-Karp (`max_matching`). Past
MAX_SUBSET_PAIRS pairs of one name the matching is refused (TooManyPairs) and the case
abstains with that reason.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

from judge.transcript import Call, canonical, json_equal

if TYPE_CHECKING:  # numpy on use: `judge --help` and `judge rubrics` import no heavy library
    import numpy as np

ARGUMENT_MODES = ("exact", "ignore", "subset")
# Agent x expected calls of one name that `subset` compares in one case: 5,000 x 5,000
# takes about a second and 100 MB (benchmarks/trajectory.md); past it the case abstains.
MAX_SUBSET_PAIRS = 25_000_000


class TooManyPairs(ValueError):
    """More calls of one name than `subset` matching compares in one case (the message
    says how many, and the bound)."""


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
    for name, (agent, wanted) in by_name.items():
        if len(agent) * len(wanted) > MAX_SUBSET_PAIRS:
            raise TooManyPairs(
                f"{len(agent):,} agent calls x {len(wanted):,} expected calls named "
                f"{name[:60]!r} is over the {MAX_SUBSET_PAIRS:,} pairs `arguments: subset` "
                "compares in one case"
            )
    pairs: list[tuple[int, int]] = []
    for agent, wanted in by_name.values():
        if agent and wanted:
            fit = subset_fit_matrix([actual[i] for i in agent], [expected[j] for j in wanted])
            pairs.extend((agent[r], wanted[c]) for r, c in max_matching(fit))
    return sorted(pairs, key=lambda pair: pair[1])


def subset_fit_matrix(actual: Sequence[Call], expected: Sequence[Call]) -> np.ndarray:
    """The boolean fit matrix under `subset` (rows: agent calls, columns: expected calls)
    of calls that share one name: `fit[i, j]` when every key of expected j is in agent
    call i with a JSON-equal value (`fits`), and both are objects.

    Built with numpy, one key at a time: each expected key's values and the agent's values
    under that key get integer codes (equal `frozen` keys, equal codes), and the columns
    that name the key keep only the rows whose code is theirs. Work is the agent calls
    times the keys of all expected calls, never a Python loop over pairs."""
    import numpy as np

    rows, cols = len(actual), len(expected)
    objects = np.fromiter((isinstance(c.arguments, dict) for c in actual), bool, rows)
    fit = np.zeros((rows, cols), dtype=bool)
    wanted: dict[str, list[tuple[int, Hashable]]] = defaultdict(list)
    for column, call in enumerate(expected):
        if isinstance(call.arguments, dict):
            fit[:, column] = objects
            for key, value in call.arguments.items():
                wanted[key].append((column, frozen(value)))
    for key, values in wanted.items():
        codes: dict[Hashable, int] = {}
        where = np.fromiter((column for column, _ in values), np.intp, len(values))
        want = np.fromiter((codes.setdefault(v, len(codes)) for _, v in values), np.int64)
        have = np.fromiter((_code(call, key, codes) for call in actual), np.int64, rows)
        fit[:, where] &= have[:, None] == want[None, :]
    return fit


def _code(call: Call, key: str, codes: dict[Hashable, int]) -> int:
    """The code of the agent call's value under `key`: -2 when it has none, -1 when it is
    no expected call's value (neither equals a code, which start at 0)."""
    if not isinstance(call.arguments, dict) or key not in call.arguments:
        return -2
    return codes.get(frozen(call.arguments[key]), -1)


def max_matching(fit: np.ndarray) -> list[tuple[int, int]]:
    """A maximum matching of the boolean matrix `fit` as (row, column) pairs, by row:
    Hopcroft-Karp (scipy.sparse.csgraph.maximum_bipartite_matching), O(E sqrt(V)) on the
    fitting pairs E. Deterministic for a given matrix."""
    rows, cols = fit.shape
    if fit.all():  # everything fits everything: any pairing is maximum
        return [(i, i) for i in range(min(rows, cols))]
    if not fit.any():
        return []
    from scipy.sparse import csr_matrix  # only this mode needs scipy
    from scipy.sparse.csgraph import maximum_bipartite_matching

    matched = maximum_bipartite_matching(csr_matrix(fit), perm_type="column")
    return [(row, int(column)) for row, column in enumerate(matched) if column >= 0]
