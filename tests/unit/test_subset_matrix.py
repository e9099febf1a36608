"""`arguments: subset` matching built with numpy (issue 52, item 4): the fit matrix equals the
pairwise rule (`fits`) on seeded random calls, the matching is maximum (a brute-force
augmenting-path search written here), and past MAX_SUBSET_PAIRS calls of one name the case
abstains in one line naming the bound. The speed is a benchmark's (benchmarks/trajectory.md),
not a test's."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.engine.rules import RulesJudge
from judge.kinds import _matching
from judge.kinds._matching import fits, max_matching, pair_calls, subset_fit_matrix
from judge.rubric import RubricLibrary
from judge.schemas import Case
from judge.transcript import Call

VALUES: tuple[Any, ...] = (3, 3.0, True, 1, "3", None, [3], {"v": 3}, {"v": 3.0}, [1, [2]])
KEYS = ("sku", "qty", "note")


def random_call(rng: random.Random, name: str) -> Call:
    if rng.random() < 0.1:
        return Call(name, "{not json")
    keys = rng.sample(KEYS, rng.randint(0, len(KEYS)))
    return Call(name, {k: rng.choice(VALUES) for k in keys})


def augmenting_size(fit: np.ndarray) -> int:
    """The size of a maximum matching by Kuhn's augmenting paths (a different method)."""
    owner: dict[int, int] = {}

    def augment(row: int, seen: set[int]) -> bool:
        for col in np.flatnonzero(fit[row]):
            if col not in seen:
                seen.add(col)
                if col not in owner or augment(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    return sum(augment(row, set()) for row in range(fit.shape[0]))


@pytest.mark.parametrize("seed", [11, 29, 53, 97])
def test_the_matrix_is_the_pairwise_rule_and_the_matching_is_maximum(seed: int) -> None:
    rng = random.Random(seed)
    actual = [random_call(rng, "order") for _ in range(rng.randint(1, 40))]
    expected = [random_call(rng, "order") for _ in range(rng.randint(1, 40))]
    fit = subset_fit_matrix(actual, expected)
    brute = np.array([[fits(a, e, "subset") for e in expected] for a in actual])
    assert fit.shape == brute.shape and (fit == brute).all()
    pairs = max_matching(fit)
    assert all(fit[r, c] for r, c in pairs)
    assert len({r for r, _ in pairs}) == len({c for _, c in pairs}) == len(pairs)
    assert len(pairs) == augmenting_size(fit)


def test_calls_of_other_names_never_pair() -> None:
    actual = [Call("a", {"k": 1}), Call("b", {"k": 1}), Call("a", {})]
    expected = [Call("b", {}), Call("a", {"k": 1}), Call("c", {})]
    assert pair_calls(actual, expected, "subset") == [(1, 0), (0, 1)]


def grade(rows: dict[str, Any], folder: Path) -> Any:
    from judge.kinds import get_kind

    text = (
        get_kind("trajectory").template("keys").replace("# arguments: exact", "arguments: subset")
    )
    (folder / "keys").mkdir()
    (folder / "keys" / "v1.yaml").write_text(text)
    rubric = RubricLibrary([folder]).load("keys")
    assert rubric.spec.arguments == "subset"
    return RulesJudge().evaluate_sync(rubric, Case.model_validate(rows))


def conversation(made: list[Call], expected: list[Call]) -> dict[str, Any]:
    calls = [
        {"id": f"x{i}", "function": {"name": c.name, "arguments": c.arguments}}
        for i, c in enumerate(made)
    ]
    results = [{"role": "tool", "tool_call_id": f"x{i}", "content": "ok"} for i in range(len(made))]
    return {
        "id": "many",
        "messages": [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": calls}, *results],
        "expected_tool_calls": [c.as_json() for c in expected],
    }  # fmt: skip


def test_past_the_bound_the_case_abstains_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_matching, "MAX_SUBSET_PAIRS", 120)
    made = [Call("fetch", {"page": i, "lang": "pt"}) for i in range(13)]
    wanted = [Call("fetch", {"page": i}) for i in range(10)]  # 130 pairs of one name
    with pytest.raises(_matching.TooManyPairs) as refused:
        pair_calls(made, wanted, "subset")
    said = str(refused.value)
    assert said == (
        "13 agent calls x 10 expected calls named 'fetch' is over the 120 pairs "
        "`arguments: subset` compares in one case"
    )
    outcome = grade(conversation(made, wanted), tmp_path)
    assert outcome.status == "abstained" and outcome.error == f"not matched: {said}"
    # two names of 60 pairs each stay under it: each name is its own matching
    other = [Call("store", {"page": i}) for i in range(6)]
    pairs = pair_calls(made[:10] + other, wanted[:6] + other, "subset")
    assert len(pairs) == 12
