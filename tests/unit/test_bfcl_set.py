"""The vendored BFCL set (tests/data/bfcl): it converts to labelled conversation cases that
validate, and the trajectory modes agree with its ground truth where their rules say they
must: an unordered exact match is BFCL's own rule but for a second acceptable value (the
rubric knows one answer), which it calls a mismatch."""

from __future__ import annotations

import importlib.util
from collections import Counter
from typing import Any

import pytest

from calibration import cohen_kappa
from judge.engine.rules import RulesJudge
from judge.kinds.trajectory import TrajectorySpec, trajectory_verdict
from judge.rubric import load_rubric
from judge.schemas import Case
from judge.transcript import agent_calls, expected_calls
from tests.helpers import REPO, read_jsonl

DATA = REPO / "tests" / "data" / "bfcl"
GUIDE = REPO / "docs" / "guides" / "conversations.md"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], dict[str, dict]]:
    tmp_path = tmp_path_factory.mktemp("bfcl")
    spec = importlib.util.spec_from_file_location("bfcl_convert", DATA / "convert.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.convert(tmp_path) == 2673
    labels = {row["id"]: row for row in read_jsonl(tmp_path / "labels.jsonl")}
    return read_jsonl(tmp_path / "cases.jsonl"), labels


def test_the_set_converts_and_each_variant_has_its_label(converted: Any) -> None:
    cases, labels = converted
    variants = Counter((row["variant"], row["label"]) for row in labels.values())
    assert variants[("reference", "match")] == 400 and variants[("extra_call", "mismatch")] == 400
    assert {label for (_, label) in variants} == {"match", "mismatch"}
    spec = TrajectorySpec(match="unordered", arguments="exact")
    disagree: Counter[str] = Counter()
    for row in cases[::7]:  # every seventh case: all variants, a fast test
        case = Case.model_validate(row)
        verdict = trajectory_verdict(
            agent_calls(case.messages), expected_calls(case.expected_tool_calls), spec
        )
        truth = labels[case.id]
        if ("match" if verdict.matched else "mismatch") != truth["label"]:
            disagree[truth["variant"]] += 1
    assert set(disagree) == {"alternative"}


def test_the_tools_are_json_schemas_jsonschema_accepts(converted: Any) -> None:
    cases, labels = converted
    rubric = load_rubric("tool_arguments")
    for row in cases[::50]:
        outcome = RulesJudge().evaluate_sync(rubric, Case.model_validate(row))
        for call in outcome.verdict.invalid:
            assert not any("schema cannot be used" in e for e in call.errors), call
        if labels[row["id"]]["variant"] == "reference":
            assert outcome.verdict.valid == outcome.verdict.calls, row["id"]


@pytest.mark.parametrize(
    ("match", "arguments", "kappa"),
    [("superset", "exact", 0.486), ("unordered", "subset", 0.794), ("strict", "exact", 0.416)],
)
def test_the_guides_agreement_figures_are_what_the_set_gives(
    converted: Any, match: str, arguments: str, kappa: float
) -> None:
    """docs/guides/conversations.md's table (from tests/data/bfcl/agreement.py, through
    `judge calibrate`), recomputed here from the kind and Cohen's kappa directly."""
    cases, labels = converted
    spec = TrajectorySpec(match=match, arguments=arguments)  # type: ignore[arg-type]
    truth, judged = [], []
    for row in cases:
        case = Case.model_validate(row)
        verdict = trajectory_verdict(
            agent_calls(case.messages), expected_calls(case.expected_tool_calls), spec
        )
        truth.append(labels[case.id]["label"])
        judged.append("match" if verdict.matched else "mismatch")
    assert round(cohen_kappa(truth, judged), 3) == kappa
    assert f"| {match}, {arguments} | 2673 | {kappa:.3f} (" in GUIDE.read_text("utf-8")
