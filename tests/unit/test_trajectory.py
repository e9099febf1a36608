"""`trajectory`: the four match modes x three argument modes against a brute-force reference
written here on other principles (permutations for the modes, a memoised search over used
calls for the largest pairing, a recursive JSON equality), on seeded random trajectories;
and the rules a reader relies on (5 == 5.0, key order, text arguments, abstaining).

The reference follows agentevals' trajectory match (langchain-ai/agentevals,
`trajectory/utils.py` `_is_trajectory_superset`): superset = every reference call is
matched by a distinct agent call; subset = the same with the roles swapped; unordered =
both. Its `tool_args_match_mode` "superset" (the agent's arguments contain the reference's)
is our `arguments: subset` (the expected keys, with equal values). Where agentevals pairs
greedily, the reference here tries every pairing: a greedy pairing can miss a valid one
under `subset` arguments (test_a_greedy_pairing_would_miss_a_valid_subset_match)."""

from __future__ import annotations

import itertools
import json
import random
from functools import cache
from typing import Any

import pytest

from judge.engine.rules import RulesJudge
from judge.kinds.trajectory import TrajectorySpec, trajectory_verdict
from judge.rubric import RubricLibrary, load_rubric
from judge.schemas import Case
from judge.transcript import Call, parse_arguments

MATCH_MODES = ("strict", "unordered", "subset", "superset")
ARGUMENT_MODES = ("exact", "ignore", "subset")
NAMES = ("search", "book")
KEYS = ("city", "n", "flag")
VALUES: tuple[Any, ...] = ("Paris", "paris", 5, 5.0, 6, True, 1, None, [1, 2], {"a": 1})


# ---- the reference ----------------------------------------------------------------------


def same_json(a: Any, b: Any) -> bool:
    """JSON equality by cases: booleans only equal booleans, numbers by value, objects by
    their key sets and values, arrays item by item."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def ref_fits(actual: tuple[str, Any], expected: tuple[str, Any], mode: str) -> bool:
    (name_a, args_a), (name_e, args_e) = actual, expected
    if name_a != name_e:
        return False
    if mode == "ignore":
        return True
    if not isinstance(args_a, dict) or not isinstance(args_e, dict):
        return False  # text arguments fit nothing
    if mode == "exact":
        return same_json(args_a, args_e)
    return all(k in args_a and same_json(args_a[k], v) for k, v in args_e.items())


def ref_injective(left: list[Any], right: list[Any], fit: Any) -> bool:
    """Some one-to-one map of every `left` call onto distinct `right` calls that fit."""
    return any(
        all(fit(left[i], right[j]) for i, j in enumerate(chosen))
        for chosen in itertools.permutations(range(len(right)), len(left))
    )


def ref_matched(actual: list[Any], expected: list[Any], match: str, args: str) -> bool:
    def fit(a: Any, e: Any) -> bool:
        return ref_fits(a, e, args)

    if match == "strict":
        return len(actual) == len(expected) and all(map(fit, actual, expected))
    if match == "unordered":
        return len(actual) == len(expected) and ref_injective(actual, expected, fit)
    if match == "subset":
        return ref_injective(actual, expected, fit)
    return ref_injective(expected, actual, lambda e, a: fit(a, e))


def ref_most_pairs(actual: list[Any], expected: list[Any], args: str) -> int:
    """The largest number of disjoint fitting pairs, by trying each agent call unpaired or
    paired with each free expected call."""
    fit = [[ref_fits(a, e, args) for e in expected] for a in actual]

    @cache
    def best(i: int, used: frozenset[int]) -> int:
        if i == len(actual):
            return 0
        options = [best(i + 1, used)]
        options += [
            1 + best(i + 1, used | {j}) for j in range(len(expected)) if fit[i][j] and j not in used
        ]
        return max(options)

    return best(0, frozenset())


# ---- generated trajectories -------------------------------------------------------------


def random_arguments(rng: random.Random) -> dict[str, Any]:
    return {k: rng.choice(VALUES) for k in rng.sample(KEYS, rng.randint(0, 2))}


def as_written(rng: random.Random, arguments: dict[str, Any]) -> str:
    """How a model might write the arguments: keys in any order, or broken JSON."""
    if rng.random() < 0.08:
        return "{city: Paris"
    items = list(arguments.items())
    rng.shuffle(items)
    return json.dumps(dict(items))


def trajectory_pair(rng: random.Random) -> tuple[list[Any], list[Any]]:
    """(agent calls with arguments as written, expected calls); the agent often copies an
    expected call, maybe with a key added or a value changed, so every mode sees both
    outcomes."""
    expected = [(rng.choice(NAMES), random_arguments(rng)) for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.25:  # the expected calls themselves, in order or shuffled
        copied = rng.sample(expected, len(expected)) if rng.random() < 0.5 else expected
        return [(name, as_written(rng, arguments)) for name, arguments in copied], expected
    actual = []
    for _ in range(rng.randint(0, 4)):
        if expected and rng.random() < 0.7:
            name, arguments = rng.choice(expected)
            arguments = dict(arguments)
            if rng.random() < 0.3:
                arguments[rng.choice(KEYS)] = rng.choice(VALUES)
        else:
            name, arguments = rng.choice(NAMES), random_arguments(rng)
        actual.append((name, as_written(rng, arguments)))
    return actual, expected


@pytest.mark.parametrize("args", ARGUMENT_MODES)
@pytest.mark.parametrize("match", MATCH_MODES)
def test_every_mode_agrees_with_the_brute_force_reference(match: str, args: str) -> None:
    rng = random.Random(f"{match}-{args}")
    spec = TrajectorySpec(match=match, arguments=args)  # type: ignore[arg-type]
    outcomes = []
    for _ in range(300):
        written, expected = trajectory_pair(rng)
        actual = [(name, parse_arguments(text)) for name, text in written]
        verdict = trajectory_verdict([Call(*c) for c in actual], [Call(*c) for c in expected], spec)
        pairs = ref_most_pairs(actual, expected, args)
        want = ref_matched(actual, expected, match, args)
        assert verdict.matched is want, (match, args, written, expected)
        assert verdict.paired_calls == pairs
        assert len(verdict.missing) == len(expected) - pairs
        assert len(verdict.unexpected) == len(actual) - pairs
        assert verdict.precision == (pairs / len(actual) if actual else None)
        assert verdict.recall == (pairs / len(expected) if expected else None)
        outcomes.append(want)
    assert 20 <= sum(outcomes) <= 280  # both outcomes well represented


def test_a_greedy_pairing_would_miss_a_valid_subset_match() -> None:
    """The first expected call fits both agent calls; taking the first agent call for it
    (greedy) leaves the second expected call nothing. A maximum matching finds the pairing."""
    expected = [Call("f", {"a": 1}), Call("f", {"a": 1, "b": 2})]
    actual = [Call("f", {"a": 1, "b": 2, "c": 3}), Call("f", {"a": 1})]
    verdict = trajectory_verdict(
        actual, expected, TrajectorySpec(match="unordered", arguments="subset")
    )
    assert verdict.matched and verdict.paired_calls == 2 and verdict.missing == []


# ---- the rules a reader relies on -------------------------------------------------------


def conversation(*calls: tuple[str, str], expected: Any = None) -> Case:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Book me a table."}]
    for number, (name, arguments) in enumerate(calls):
        call = {
            "id": f"t{number}",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"t{number}", "content": "done"})
    row = {"id": "c", "messages": messages}
    if expected is not None:
        row["expected_tool_calls"] = expected
    return Case.model_validate(row)


def grade(case: Case, ref: str = "trajectory") -> Any:
    return RulesJudge().evaluate_sync(load_rubric(ref), case)


def test_numbers_by_value_and_key_order_ignored() -> None:
    case = conversation(
        ("book", '{"people": 4.0, "when": {"h": 19, "d": "fri"}}'),
        expected=[{"name": "book", "arguments": {"when": {"d": "fri", "h": 19.0}, "people": 4}}],
    )
    outcome = grade(case)
    assert outcome.status == "ok" and outcome.verdict.matched


def test_text_arguments_mismatch_and_are_kept_as_written() -> None:
    case = conversation(
        ("book", "{people: 4"), expected=[{"name": "book", "arguments": {"people": 4}}]
    )
    verdict = grade(case).verdict.model_dump(mode="json")
    assert verdict["matched"] is False
    assert verdict["unexpected"] == [{"name": "book", "arguments": "{people: 4"}]
    assert verdict["missing"] == [{"name": "book", "arguments": {"people": 4}}]
    assert "not a JSON object" in verdict["notes"][0]


def test_built_in_is_superset_with_exact_arguments() -> None:
    rubric = load_rubric("trajectory@1")
    assert (rubric.spec.match, rubric.spec.arguments) == ("superset", "exact")
    case = conversation(
        ("search", '{"q": "x"}'),
        ("book", '{"people": 2}'),
        expected=[{"name": "book", "arguments": {"people": 2}}],
    )
    record = grade(case)
    scored = rubric.behaviour.score(rubric, record.verdict)
    assert (scored.score, scored.label) == (1.0, "match")
    assert record.verdict.precision == 0.5 and record.verdict.recall == 1.0


def test_strict_says_when_only_the_order_differs() -> None:
    spec = TrajectorySpec(match="strict")
    calls = [Call("a", {}), Call("b", {})]
    verdict = trajectory_verdict(calls, calls[::-1], spec)
    assert not verdict.matched and verdict.missing == [] and "another order" in verdict.notes[0]


def test_a_case_without_expected_calls_abstains_with_its_reason() -> None:
    outcome = grade(conversation(("book", "{}")))
    assert outcome.status == "abstained" and "no expected_tool_calls" in (outcome.error or "")
    none_expected = grade(conversation(("book", "{}"), expected=[]))  # [] is an expectation
    assert none_expected.status == "ok" and none_expected.verdict.matched  # superset of nothing


def test_the_starting_file_names_both_keys(tmp_path: Any) -> None:
    from judge.kinds import get_kind

    text = get_kind("trajectory").template("tools")
    assert "# match: superset" in text and "# arguments: exact" in text
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "v1.yaml").write_text(text.replace("# match: superset", "match: strict"))
    rubric = RubricLibrary([tmp_path]).load("tools")
    assert rubric.kind == "trajectory" and rubric.spec.match == "strict"


def test_calls_copied_from_a_transcript_are_read_as_expected_calls() -> None:
    """An expected call in OpenAI's tool-call shape (copied from a good run), and a tool
    call whose `type` a log wrote as null, are read as the plain forms."""
    written = {"id": "x", "type": "function", "function": {"name": "book", "arguments": '{"n": 2}'}}
    case = conversation(("book", '{"n": 2.0}'), expected=[written])
    assert grade(case).verdict.matched
    row = case.model_dump(mode="json")
    row["messages"][1]["tool_calls"][0]["type"] = None
    assert Case.model_validate(row).messages[1].tool_calls[0].type == "function"
