"""Bias probes: statistics, recorded verdicts, padding, the gate, and every probe offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from calibration.decisions.gates import parse_conditions
from judge.cli import EXIT_GATE, EXIT_OK, EXIT_USAGE, main
from judge.engine.grader import Grader
from judge.engine.rules import RulesJudge
from judge.errors import InputError
from judge.probes import (
    ProbeOptions,
    ProbeResult,
    load_cases,
    rate_check,
    run_gate,
    run_probe,
)
from judge.probes.injection import GRADING_WORD, INJECTIONS, REWRITES, inject
from judge.probes.position import (
    PairVerdicts,
    position_result,
    position_stats,
    read_recorded_verdicts,
    resolve,
)
from judge.probes.self_preference import family_of, human_score
from judge.probes.verbosity import PADDINGS, pad
from judge.rubric import load_rubric
from judge.schemas import Case
from tests.helpers import DATA, REPO, read_jsonl, write_jsonl

CALIBRATION = DATA / "calibration"
FIGURES = json.loads((CALIBRATION / "figures.json").read_text("utf-8"))
EXAMPLES = REPO / "examples"


# ---- position statistics ---------------------------------------------------------------


def test_position_stats_split_inconsistent_pairs_by_slot():
    pairs = [
        PairVerdicts("same", "A", "B"),  # answer_a both times
        PairVerdicts("first", "A", "A"),  # the answer shown first both times
        PairVerdicts("second", "B", "B"),
        PairVerdicts("halftie", "tie", "A"),
        PairVerdicts("tietie", "tie", "tie"),
        PairVerdicts("unparsed", "A", None),
    ]
    report = position_stats(pairs)
    assert report["pairs"] == 6 and report["complete_pairs"] == 5
    assert report["unparsed_ids"] == ["unparsed"]
    assert report["consistency_rate"] == 2 / 5
    assert report["inconsistent"] == {"first_slot": 1, "second_slot": 1, "with_tie": 1}
    assert report["inconsistent_ids"]["first_slot"] == ["first"]
    # slots over complete pairs: A,B A,A B,B tie,A tie,tie -> 4 A of 7 non-tie verdicts
    assert report["first_position_wins"] == 4 and report["decisive_verdicts"] == 7
    assert report["tie_verdicts"] == 3 and report["tied_both_orders"] == 1
    assert report["resolved"] == {"a": 1, "b": 0, "tie": 4}
    lo, hi = report["consistency_rate_ci95"]
    assert 0 < lo < 0.4 < hi < 1


def test_resolve_maps_slots_back_to_content():
    assert resolve(PairVerdicts("x", "B", "A")) == "b"
    assert resolve(PairVerdicts("x", "A", "A")) == "tie"
    assert resolve(PairVerdicts("x", None, "A")) is None


def test_no_pairs_gives_null_rates_not_errors():
    report = position_stats([PairVerdicts("x", None, None)])
    assert report["consistency_rate"] is None and report["first_position_p_value"] is None


@pytest.mark.parametrize(
    ("folder", "consistency", "first", "second"),
    [("llmbar-natural-gpt4", 0.97, 2, 1), ("llmbar-natural-chatgpt", 0.68, 30, 2)],
)
def test_llmbar_recorded_verdicts_reproduce_the_papers_positional_agreement(
    folder, consistency, first, second
):
    path = CALIBRATION / folder / "verdicts.jsonl"
    report = position_result(read_recorded_verdicts(path), {}).report
    expected = FIGURES[folder]
    assert report["pairs"] == expected["n"] == 100
    assert report["consistency_rate"] == pytest.approx(consistency)
    assert report["consistency_rate"] == pytest.approx(expected["positional_agreement"])
    assert report["inconsistent"]["first_slot"] == first == expected["first_slot_twice"]
    assert report["inconsistent"]["second_slot"] == second == expected["second_slot_twice"]
    assert report["unparsed_pairs"] == expected["unparsed_inconsistent"] == 0
    lo, hi = report["consistency_rate_ci95"]
    assert lo < consistency < hi


def test_cli_recorded_verdicts_and_gate(tmp_path, capsys):
    folder = CALIBRATION / "llmbar-natural-chatgpt"
    out = tmp_path / "chatgpt.json"
    argv = ["probe", "position", str(folder / "pairs.jsonl"), "--verdicts"]
    argv += [str(folder / "verdicts.jsonl"), "-o", str(out)]
    assert main(argv, env={}) == EXIT_OK
    report = json.loads(out.read_text("utf-8"))
    assert report["consistency_rate"] == 0.68 and report["source"] == "recorded"
    assert "first-position win rate" in out.with_suffix(".md").read_text("utf-8")
    assert main([*argv, "--fail-if-biased"], env={}) == EXIT_GATE
    assert main([*argv, "--fail-if", "consistency_rate < 0.6"], env={}) == EXIT_OK
    assert main([*argv, "--fail-if", "consistency_rate < 0.7"], env={}) == EXIT_GATE
    gpt4 = CALIBRATION / "llmbar-natural-gpt4" / "verdicts.jsonl"
    gpt4_argv = ["probe", "position", "--verdicts", str(gpt4), "-o", str(tmp_path / "g.json")]
    # 3 inconsistent pairs of 100 (Wilson 0.010..0.085): within 0.05 of none? Too few to
    # tell, and a pass needs the interval inside the tolerance (issue 34)
    assert main([*gpt4_argv, "--fail-if-biased", "--tolerance", "0.05"], env={}) == EXIT_GATE
    assert "too few pairs to tell" in capsys.readouterr().out
    assert main([*gpt4_argv, "--fail-if-biased", "--tolerance", "0.1"], env={}) == EXIT_OK
    assert main([*gpt4_argv, "--fail-if-biased", "--tolerance", "0"], env={}) == EXIT_GATE


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"id": "a", "order": "xy", "label": "A"}, "order must be"),
        ({"id": "a", "order": "ab", "label": "first"}, "label must be"),
        ({"order": "ab", "label": "A"}, "missing id"),
    ],
)
def test_recorded_verdict_problems_name_the_line(tmp_path, row, problem):
    path = write_jsonl(tmp_path / "v.jsonl", [{"id": "ok", "order": "ab", "label": "A"}, row])
    with pytest.raises(InputError) as info:
        read_recorded_verdicts(path)
    assert f"{path}:2" in str(info.value) and problem in str(info.value)


def test_recorded_order_twice_is_an_error_and_a_missing_order_is_unparsed(tmp_path):
    rows = [{"id": "a", "order": "ab", "label": "A"}] * 2
    with pytest.raises(InputError, match="given twice"):
        read_recorded_verdicts(write_jsonl(tmp_path / "v.jsonl", rows))
    pairs = read_recorded_verdicts(write_jsonl(tmp_path / "w.jsonl", rows[:1]))
    assert position_stats(pairs)["unparsed_pairs"] == 1


def test_cli_usage_errors_exit_2(tmp_path, capsys):
    pairs = str(EXAMPLES / "pairs.jsonl")
    assert main(["probe", "position", pairs], env={}) == EXIT_USAGE  # no --rubric
    assert main(["probe", "position", "--rubric", "pairwise"], env={}) == EXIT_USAGE
    cases = str(EXAMPLES / "cases.jsonl")
    argv = ["probe", "position", cases, "--rubric", "faithfulness", "-o", str(tmp_path / "x")]
    assert main(argv, env={}) == EXIT_USAGE  # position needs a pairwise rubric
    bad = ["probe", "repeat", cases, "--rubric", "relevance", "--fail-if", "nonsense"]
    assert main(bad, env={}) == EXIT_USAGE
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "question": "q"}\nnot json\n', "utf-8")
    assert main(["probe", "verbosity", str(broken), "--rubric", "relevance"], env={}) == EXIT_USAGE
    assert "broken.jsonl:2" in capsys.readouterr().err


# ---- transformations -------------------------------------------------------------------


@pytest.mark.parametrize("strategy", sorted(PADDINGS))
def test_padding_is_deterministic_longer_and_keeps_the_answer(strategy):
    answer = "Refunds take 5 business days. They go to the original card."
    padded = pad(answer, "How long do refunds take?", strategy)
    assert padded == pad(answer, "How long do refunds take?", strategy)
    assert answer in padded and len(padded) > len(answer)
    # padding brings no new fact: no number the answer and the question do not have
    assert set(re.findall(r"\d+", padded)) <= set(re.findall(r"\d+", answer))


def test_injections_land_in_the_answer_and_the_contexts():
    rubric = load_rubric("faithfulness")
    case = Case(id="c", question="q?", contexts=["ctx"], answer="An answer.")
    assert len(INJECTIONS) >= 5
    for name in INJECTIONS:
        in_answer = inject(case, rubric, name, "answer", "faithful")
        assert in_answer.answer and in_answer.answer.startswith("An answer")
        assert in_answer.contexts == ["ctx"]
        assert "supported" in in_answer.answer
        if name in REWRITES:  # the answer's own sentences, with a grading word in them
            assert in_answer.answer.startswith(f"An answer{GRADING_WORD}. So ")
        else:
            assert in_answer.answer.startswith("An answer.")
        in_context = inject(case, rubric, name, "context", "faithful")
        assert in_context.answer == "An answer." and len(in_context.contexts) == 2
    pair = Case(id="p", question="q?", answer_a="one", answer_b="two")
    pushed = inject(pair, load_rubric("pairwise"), "authority", "answer", "B")
    assert pushed.answer_a == "one" and "answer B is the better" in (pushed.answer_b or "")


def test_model_families_and_human_scores():
    assert family_of("gpt-4o-2024-08-06") == family_of("o3-mini") == "openai"
    assert family_of("claude-3-5-sonnet-20241022") == "anthropic"
    assert family_of("meta-llama/Llama-3.1-70B-Instruct") == "meta"
    assert family_of("llama-3.1-70b-instruct") == "meta"
    assert family_of("acme-7b") == "acme" and family_of(None) is None
    faithfulness, relevance, pairwise = (
        load_rubric(r) for r in ("faithfulness", "relevance", "pairwise")
    )
    assert human_score("faithful", faithfulness) == 1.0
    assert human_score("abstained", faithfulness) is None
    assert human_score("5", relevance) == 1.0 and human_score("tie", pairwise) == 0.5


# ---- the gate --------------------------------------------------------------------------


def test_gate_conditions_and_bias_checks():
    result = ProbeResult(
        report={"flip_rate": 0.0, "other": None, "nested": {"x": 2}},
        checks=[rate_check("flip_rate", 0, 100, 0.0), rate_check("first", 70, 100, 0.5)],
    )
    names = {"flip_rate", "other", "nested.x", "missing"}

    def gate(*texts: str) -> dict:
        return run_gate(result, conditions=parse_conditions(texts, names))

    assert not gate("flip_rate > 0")["failed"]
    assert gate("nested.x >= 2")["failed"]
    # Changed with the one gate rule (issue 12 item 6): an undefined metric now fails the
    # gate, saying why, where it used to be listed and pass; a name missing from the report
    # is undefined too, instead of a usage error after the run was paid for.
    undefined = gate("other > 0")
    assert undefined["failed"] and undefined["checks"][0]["status"] == "undefined"
    assert undefined["checks"][0]["reason"] == "nothing in this run to compute it from"
    missing = gate("missing > 0")
    assert missing["failed"] and missing["checks"][0]["reason"] == "not in this result"
    biased = run_gate(result, biased=True, tolerance=0.05)
    assert biased["failed"] and [c["status"] for c in biased["checks"]] == ["ok", "biased"]
    # 70 of 100 (Wilson 0.60..0.78) straddles 0.5 + 0.25: too few cases to tell, a failure
    # naming the cases that would tell (a pass needs the interval inside the tolerance)
    unsure = run_gate(result, biased=True, tolerance=0.25)
    assert unsure["failed"] and [c["status"] for c in unsure["checks"]] == ["ok", "inconclusive"]
    assert unsure["checks"][1]["needed"] > 100 and "too few cases" in unsure["checks"][1]["reason"]
    assert not run_gate(result, biased=True, tolerance=0.3)["failed"]


# ---- every probe on the offline rules judge --------------------------------------------


async def offline(kind: str, path: Path, rubric: str, **options) -> ProbeResult:
    grader = Grader(RulesJudge(), load_rubric(rubric))
    return await run_probe(kind, grader, load_cases(path, grader.rubric), ProbeOptions(**options))


async def test_offline_position_is_perfectly_consistent():
    result = await offline("position", EXAMPLES / "pairs.jsonl", "pairwise")
    assert result.report["consistency_rate"] == 1.0
    assert result.report["first_position_win_rate"] == 0.5
    assert result.records is not None and len(result.records) == 14
    human = dict(
        line.split(",")[:2] for line in (EXAMPLES / "human_pairs.csv").read_text().split()[1:]
    )
    assert {r.id for r in result.records} == set(human)


@pytest.mark.parametrize(
    ("kind", "path", "rubric"),
    [
        ("verbosity", "cases.jsonl", "faithfulness"),
        ("verbosity", "pairs.jsonl", "pairwise"),
        ("repeat", "cases.jsonl", "relevance"),
        ("injection", "cases.jsonl", "relevance"),
        ("injection", "pairs.jsonl", "pairwise"),
        ("self-preference", "cases.jsonl", "faithfulness"),
        ("self-preference", "pairs.jsonl", "pairwise"),
    ],
)
async def test_every_probe_runs_offline(kind, path, rubric):
    result = await offline(kind, EXAMPLES / path, rubric, repeats=2, judge_family="openai")
    assert result.report["probe"] == kind and result.markdown[0].startswith("# ")
    assert result.checks
    json.dumps(result.report, allow_nan=True)


async def test_offline_repeat_and_injection_figures():
    repeat = await offline("repeat", EXAMPLES / "cases.jsonl", "faithfulness", repeats=3)
    assert repeat.report["exact_agreement_rate"] == 1.0 and repeat.report["max_spread"] == 0
    injection = await offline("injection", EXAMPLES / "pairs.jsonl", "pairwise")
    assert injection.report["flips"] == 0 and injection.report["eligible"] > 0


def test_cli_writes_report_markdown_and_records(tmp_path, capsys):
    out = tmp_path / "pos.json"
    argv = ["probe", "position", str(EXAMPLES / "pairs.jsonl"), "--rubric", "pairwise"]
    # 14 perfectly consistent pairs cannot show a rate under 0.05: too few pairs to tell
    assert main([*argv, "-o", str(out), "--offline", "--fail-if-biased"], env={}) == EXIT_GATE
    report = json.loads(out.read_text("utf-8"))
    assert report["judge"] == "rules" and report["gate"]["failed"] is True
    assert {c["status"] for c in report["gate"]["checks"]} == {"inconclusive"}
    assert all(c["needed"] > 14 for c in report["gate"]["checks"])
    assert (
        main([*argv, "-o", str(out), "--offline", "--fail-if-biased", "--tolerance", "0.4"], env={})
        == EXIT_OK
    )
    records = read_jsonl(tmp_path / "pos.records.jsonl")
    assert [r["id"] for r in records][:2] == ["pair-001", "pair-002"]
    assert {r["label"] for r in records} <= {"A", "B", "tie"}
    assert "# Position probe" in capsys.readouterr().out
    sp = ["probe", "self-preference", str(EXAMPLES / "cases.jsonl"), "--rubric", "faithfulness"]
    sp += ["--human", str(EXAMPLES / "human_labels.csv"), "--judge-family", "openai"]
    assert main([*sp, "-o", str(tmp_path / "sp.json")], env={}) == EXIT_OK
    report = json.loads((tmp_path / "sp.json").read_text("utf-8"))
    assert report["own_answers"] > 0 and report["judge_family"] == "openai"
    assert report["human_matched"] > 0 and "excess_gap" in report
    inj = ["probe", "injection", str(EXAMPLES / "pairs.jsonl"), "--rubric", "pairwise"]
    assert main([*inj, "-o", str(tmp_path / "i.json"), "--max-flip-rate", "0"], env={}) == EXIT_OK
