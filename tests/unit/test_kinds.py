"""The kind registry and the three generic kinds (scale, labels, criteria): verdict
schemas strict output accepts, scoring, labels, summary figures and rules verdicts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.engine.measure.run_gates import grade_metric_names
from judge.engine.rules import RulesJudge
from judge.engine.summary import SummaryBuilder
from judge.errors import RubricError
from judge.kinds import Abstain, get_kind, kind_names
from judge.kinds.criteria import combine
from judge.rubric import RubricLibrary, load_rubric, write_lock
from judge.schemas import Case, GradedRecord, JudgeInfo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
USER_RUBRICS = EXAMPLES / "rubrics"
LIBRARY = RubricLibrary([USER_RUBRICS])


def strict_problems(schema: dict[str, Any], where: str = "$") -> list[str]:
    """What OpenAI's strict structured output would refuse: an object without
    `additionalProperties: false`, or a property that is not required."""
    problems = []
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        props = set(schema.get("properties", {}))
        if set(schema.get("required", [])) != props:
            problems.append(f"{where}: every property must be required")
    for key, value in schema.items():
        if isinstance(value, dict):
            problems += strict_problems(value, f"{where}.{key}")
        elif isinstance(value, list):
            problems += [p for v in value if isinstance(v, dict) for p in strict_problems(v, where)]
    return problems


RAG_KINDS = ("retrieval", "context_relevance", "correctness", "citations")


def test_every_kind_is_registered_once() -> None:
    assert {"faithfulness", "relevance", "pairwise", "scale", "labels", "criteria"} <= set(
        kind_names()
    )
    assert set(RAG_KINDS) <= set(kind_names())
    with pytest.raises(RubricError, match="unknown kind 'nope'"):
        get_kind("nope")


@pytest.mark.parametrize(
    "ref",
    ["tone", "policy", "support-quality", "faithfulness", "pairwise", *RAG_KINDS, "rag-benchmark"],
)
def test_verdict_schemas_are_strict(ref: str) -> None:
    assert strict_problems(LIBRARY.load(ref).json_schema()) == []


def test_rag_kinds_declare_their_signal_and_whether_they_need_a_judge() -> None:
    signals = {name: get_kind(name).signal for name in (*RAG_KINDS, "faithfulness")}
    assert signals == {
        "retrieval": "retrieval",
        "context_relevance": "retrieval",
        "correctness": "generation",
        "faithfulness": "generation",
        "citations": None,  # attribution: left out of the two-by-two's generation signal
    }
    computed = [k for k in kind_names() if not get_kind(k).needs_judge]
    assert computed == ["retrieval", "tool_arguments", "trajectory"]
    for name in RAG_KINDS:  # the labels calibration and labelling offer
        rubric = LIBRARY.load(name)
        assert [c for c in rubric.behaviour.choices(rubric) if c.score is not None]


@pytest.mark.parametrize("kind", sorted(kind_names()))
def test_every_kind_writes_a_starting_file_that_loads(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "mine" / "starter"
    folder.mkdir(parents=True)
    (folder / "v1.yaml").write_text(get_kind(kind).template("starter"))
    assert RubricLibrary([tmp_path / "mine"]).load("starter").kind == kind


def test_scale_verdict_score_label_and_range() -> None:
    tone = LIBRARY.load("tone")
    model = tone.verdict_model()
    verdict = model.model_validate({"rationale": "Friendly.", "score": 4})
    scored = tone.behaviour.score(tone, verdict)
    assert (scored.status, scored.score, scored.label) == ("ok", 0.75, "4")
    with pytest.raises(ValidationError):
        model.model_validate({"rationale": "x", "score": 6})
    assert [c.name for c in tone.behaviour.choices(tone)] == ["1", "2", "3", "4", "5"]
    system = tone.render(Case(id="t", question="q?", answer="a."))[0]["content"]
    assert "Score on a scale of 1 to 5:" in system and "5 = Warm, precise" in system


def test_labels_verdict_score_and_unknown_label() -> None:
    policy = LIBRARY.load("policy")
    verdict = policy.verdict_model().model_validate({"rationale": "x", "label": "minor_issue"})
    scored = policy.behaviour.score(policy, verdict)
    assert (scored.score, scored.label) == (0.5, "minor_issue")
    with pytest.raises(ValidationError):
        policy.verdict_model().model_validate({"rationale": "x", "label": "fine"})


def criteria_verdict(relevance: int, grounding: int, invented: bool) -> dict[str, Any]:
    return {
        "relevance": {"rationale": "r", "score": relevance},
        "grounding": {"rationale": "g", "score": grounding},
        "invented_policy": {"rationale": "i", "value": invented},
    }


@pytest.mark.parametrize(
    ("relevance", "grounding", "invented", "expected", "label"),
    [
        (5, 5, False, 1.0, "pass"),
        (3, 5, False, 0.4 * 0.5 + 0.6 * 1.0, "pass"),  # 0.8
        (5, 2, False, 0.4 * 1.0 + 0.6 * 0.25, "fail"),  # 0.55
        (5, 5, True, 0.0, "fail"),  # the penalty zeroes the score
    ],
)
def test_criteria_score_is_the_weighted_mean_times_penalties(
    relevance: int, grounding: int, invented: bool, expected: float, label: str
) -> None:
    rubric = LIBRARY.load("support-quality")
    verdict = rubric.verdict_model().model_validate(
        criteria_verdict(relevance, grounding, invented)
    )
    scored = rubric.behaviour.score(rubric, verdict)
    assert scored.score == pytest.approx(expected) and scored.label == label
    values = {"relevance": relevance, "grounding": grounding, "invented_policy": invented}
    assert combine(rubric.spec, values) == pytest.approx(expected)


def record(rubric_ref: str, verdict: dict[str, Any], slices: list[str]) -> GradedRecord:
    rubric = LIBRARY.load(rubric_ref)
    model = rubric.verdict_model().model_validate(verdict)
    scored = rubric.behaviour.score(rubric, model)
    return GradedRecord(
        id=f"c{len(verdict)}",
        rubric=rubric.id,
        rubric_version=rubric.version,
        rubric_sha256=rubric.sha256,
        judge=JudgeInfo(model="m", output_mode="json_schema"),
        status=scored.status,
        verdict=verdict,
        score=scored.score,
        label=scored.label,
        slices=slices,
    )


def test_summaries_of_the_generic_kinds() -> None:
    tone = SummaryBuilder(LIBRARY.load("tone"))
    for score, slices in [(5, ["a"]), (4, ["a"]), (2, ["b"])]:
        tone.add(record("tone", {"rationale": "x", "score": score}, slices))
    result = tone.result()
    assert result["mean_value"] == pytest.approx(11 / 3, abs=1e-6)
    assert result["pass_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert result["label_rates"]["4"] == pytest.approx(1 / 3, abs=1e-6)
    assert result["by_slice"]["b"]["pass_rate"] == 0.0

    quality = SummaryBuilder(LIBRARY.load("support-quality"))
    quality.add(record("support-quality", criteria_verdict(5, 5, False), []))
    quality.add(record("support-quality", criteria_verdict(3, 1, True), []))
    result = quality.result()
    assert result["criteria"]["relevance"]["mean"] == 4.0
    assert result["criteria"]["invented_policy"]["rate"] == 0.5
    assert result["pass_rate"] == 0.5 and result["fails"] == 1
    names = grade_metric_names(LIBRARY.load("support-quality"))
    assert {"criteria.grounding.mean", "criteria.invented_policy.rate", "pass_rate"} <= set(names)


def test_rules_verdicts_are_weak_or_abstain_and_say_so() -> None:
    case = Case(
        id="c",
        question="How long is the free trial?",
        contexts=["The free trial lasts 14 days."],
        answer="The free trial lasts 14 days. We also give a free gift.",
    )
    judge = RulesJudge()
    tone = judge.evaluate_sync(LIBRARY.load("tone"), case)
    assert tone.status == "ok" and "weak lexical signal" in tone.verdict.model_dump()["rationale"]
    policy = judge.evaluate_sync(LIBRARY.load("policy"), case)
    assert policy.status == "abstained" and "use a model judge" in (policy.error or "")
    quality = judge.evaluate_sync(LIBRARY.load("support-quality"), case)
    data = quality.verdict.model_dump() if quality.verdict else {}
    assert data["invented_policy"]["value"] is True  # "free gift" is not in the context
    assert isinstance(get_kind("labels").rules_verdict(LIBRARY.load("policy"), case), Abstain)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("pass_at: 4", "pass_at: 9"), "pass_at 9 is outside 1..5"),
        (lambda t: t.replace("anchors:", "anchor:"), "anchor: extra inputs are not permitted"),
        (lambda t: t.replace("  5: Warm", "  7: Warm"), r"anchors \[7\] are outside the scale"),
        (lambda t: t.replace("kind: scale", "kind: scales"), "unknown kind 'scales'"),
    ],
)
def test_a_bad_generic_rubric_is_refused_naming_the_problem(
    tmp_path: Path, edit: Any, message: str
) -> None:
    folder = tmp_path / "mine" / "tone"
    folder.mkdir(parents=True)
    (folder / "v1.yaml").write_text(edit((USER_RUBRICS / "tone" / "v1.yaml").read_text()))
    with pytest.raises(RubricError, match=message) as info:
        RubricLibrary([tmp_path / "mine"]).load("tone")
    assert "tone/v1.yaml" in str(info.value)


def test_criteria_inputs_must_be_listed_by_the_rubric(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "support-quality"
    folder.mkdir(parents=True)
    text = (USER_RUBRICS / "support-quality" / "v1.yaml").read_text()
    (folder / "v1.yaml").write_text(
        text.replace("inputs: [question, contexts, answer]\n", "inputs: [question, answer]\n", 1)
    )
    with pytest.raises(RubricError, match=r"criteria read inputs \['contexts'\]"):
        RubricLibrary([tmp_path / "mine"]).load("support-quality")


def test_a_user_folder_cannot_shadow_a_built_in_rubric(tmp_path: Path) -> None:
    shutil.copytree(USER_RUBRICS / "tone", tmp_path / "faithfulness")
    with pytest.raises(RubricError, match="'faithfulness' is defined in"):
        RubricLibrary([tmp_path])


def test_an_edited_locked_user_rubric_is_refused_with_the_fix(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(USER_RUBRICS, mine)
    assert load_rubric("tone", RubricLibrary([mine])).version == 1
    path = mine / "tone" / "v1.yaml"
    path.write_text(path.read_text().replace("Warm, precise", "Warm and precise"))
    with pytest.raises(RubricError, match="changed since it was locked.*next version file"):
        RubricLibrary([mine]).load("tone")


def test_write_lock_adds_new_files_and_keeps_released_ones(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(USER_RUBRICS, mine)
    before = (mine / "rubrics.lock").read_text()
    v2 = (mine / "tone" / "v1.yaml").read_text().replace("version: 1", "version: 2")
    (mine / "tone" / "v2.yaml").write_text(v2)
    assert write_lock(mine) == ["tone@2"]
    after = (mine / "rubrics.lock").read_text()
    assert all(line in after for line in before.splitlines())
    assert RubricLibrary([mine]).load("tone").version == 2
