"""``judge gate`` (issue 15 item 5): a candidate planted worse exits 3, one planted equal
exits 0; McNemar's exact p equals statsmodels'; the bootstrap is paired; bad input exits 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from calibration.compare.judges import compare_judges, mcnemar_exact
from judge.cli import main
from tests.calibration_sets import DATA, EXAMPLES, grade_examples_offline

N = 400


def gate(*argv: object) -> int:
    try:
        return main(["gate", *map(str, argv)])
    except SystemExit as stop:
        return int(stop.code or 0)


def _write(path, ids, labels):
    path.write_text("id,label\n" + "".join(f"{i},{v}\n" for i, v in zip(ids, labels, strict=True)))
    return path


def _planted(tmp_path, baseline_error, candidate_error, seed=11):
    """Human pass/fail labels and two judges, each wrong on random cases at its rate."""
    rng = np.random.default_rng(seed)
    ids = [f"case-{i:03d}" for i in range(N)]
    human = np.where(rng.random(N) < 0.4, "pass", "fail")

    def judge(error):
        wrong = rng.random(N) < error
        return np.where(wrong, np.where(human == "pass", "fail", "pass"), human)

    return (
        _write(tmp_path / "human.csv", ids, human),
        _write(tmp_path / "baseline.csv", ids, judge(baseline_error)),
        _write(tmp_path / "candidate.csv", ids, judge(candidate_error)),
    )


def _files(human, baseline, candidate):
    return ["--baseline", baseline, "--candidate", candidate, "--labels", human]


def test_a_candidate_planted_worse_exits_3(tmp_path, capsys):
    human, baseline, candidate = _planted(tmp_path, 0.08, 0.20)
    out_json, out_md = tmp_path / "gate.json", tmp_path / "gate.md"
    argv = _files(human, baseline, candidate) + ["--json", out_json, "--markdown", out_md]
    assert gate(*argv, "--bootstrap", 500) == 3
    printed = capsys.readouterr().out
    assert "the candidate is significantly worse" in printed and "gate: FAILED (exit 3)" in printed
    result = json.loads(out_json.read_text())
    assert result["verdict"] == "worse" and result["gate"]["failed"] is True
    assert result["difference"]["kappa_ci95"][1] < 0
    assert result["mcnemar"]["p_value"] < 0.05
    assert "# Judge gate: FAILED" in out_md.read_text()


def test_a_candidate_planted_equal_exits_0(tmp_path, capsys):
    # Same error rate, different random errors: no significant difference.
    human, baseline, candidate = _planted(tmp_path, 0.10, 0.10)
    argv = _files(human, baseline, candidate) + ["--bootstrap", 500, "--json", tmp_path / "g.json"]
    assert gate(*argv, "--min-kappa", 0.6, "--max-drop", 0.1) == 0
    result = json.loads((tmp_path / "g.json").read_text())
    assert result["verdict"] == "no_difference"
    low, high = result["difference"]["kappa_ci95"]
    assert low < 0 < high and result["mcnemar"]["p_value"] >= 0.05
    assert 0.1 < result["flips"]["rate"] < 0.3  # the errors differ case by case
    assert "gate: passed" in capsys.readouterr().out


def test_max_drop_min_kappa_and_fail_if_each_fail_the_gate(tmp_path, capsys):
    human, baseline, candidate = _planted(tmp_path, 0.10, 0.10)
    files = _files(human, baseline, candidate) + ["--bootstrap", 300]
    result = compare_judges(
        *_labels(human, baseline, candidate), labels=["fail", "pass"], n_bootstrap=300
    )
    drop = result["baseline"]["kappa"] - result["candidate"]["kappa"]
    assert gate(*files, "--max-drop", max(drop - 0.001, 0)) == (3 if drop > 0 else 0)
    assert gate(*files, "--min-kappa", 0.9) == 3
    assert "candidate_kappa_ci95_low < 0.9" in capsys.readouterr().out
    assert gate(*files, "--fail-if", "flip_rate > 0.05") == 3
    assert gate(*files, "--fail-if", "flip_rate > 0.9") == 0


def _labels(*paths):
    tables = [dict(line.split(",") for line in p.read_text().split()[1:]) for p in paths]
    ids = list(tables[0])
    return ids, *([t[i] for i in ids] for t in tables)


@pytest.mark.parametrize(
    "table",
    [
        [[50, 3], [12, 35]],
        [[40, 0], [0, 60]],
        [[10, 7], [7, 10]],
        [[0, 1], [9, 0]],
        [[5, 20], [2, 1]],
    ],
)
def test_exact_mcnemar_p_equals_statsmodels(table):
    # Rows: baseline right / wrong; columns: candidate right / wrong.
    expected = mcnemar(np.array(table), exact=True).pvalue
    assert mcnemar_exact(table[0][1], table[1][0]) == pytest.approx(expected, abs=1e-12)


def test_mcnemar_in_the_comparison_counts_the_discordant_cases():
    human = ["a", "a", "b", "b", "a", "b"]
    baseline = ["a", "b", "b", "a", "a", "b"]
    candidate = ["a", "a", "a", "a", "b", "b"]
    result = compare_judges(list("123456"), human, baseline, candidate, labels=["a", "b"])
    m = result["mcnemar"]
    assert (m["baseline_only_correct"], m["candidate_only_correct"]) == (2, 1)
    table = np.array([[2, 2], [1, 1]])  # both right 2, baseline only 2, candidate only 1
    assert m["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert result["flips"]["ids"] == ["2", "3", "5"]


def test_the_bootstrap_is_paired():
    rng = np.random.default_rng(2)
    human = list(np.where(rng.random(80) < 0.5, "x", "y"))
    judge = [h if rng.random() < 0.8 else ("y" if h == "x" else "x") for h in human]
    ids = [str(i) for i in range(80)]
    same = compare_judges(ids, human, judge, judge, labels=["x", "y"], n_bootstrap=200)
    assert same["difference"]["kappa_ci95"] == (0.0, 0.0)  # the same cases on both sides
    assert same["baseline"]["kappa_ci95"] == same["candidate"]["kappa_ci95"]
    assert same["verdict"] == "no_difference" and same["mcnemar"]["p_value"] == 1.0


def test_real_judges_gpt4_against_chatgpt_on_llmbar(capsys):
    gpt4, chatgpt = DATA / "llmbar-natural-gpt4", DATA / "llmbar-natural-chatgpt"
    files = ["--labels", gpt4 / "gold.csv", "--bootstrap", 300]
    worse = ["--baseline", gpt4 / "judge_order1.csv", "--candidate", chatgpt / "judge_order1.csv"]
    assert gate(*worse, *files) == 3
    better = ["--baseline", chatgpt / "judge_order1.csv", "--candidate", gpt4 / "judge_order1.csv"]
    assert gate(*better, *files) == 0
    assert "significantly better" in capsys.readouterr().out


def test_bad_input_exits_2(tmp_path, capsys):
    human, baseline, candidate = _planted(tmp_path, 0.1, 0.1)
    elsewhere = _write(tmp_path / "elsewhere.csv", ["x-1", "x-2"], ["pass", "fail"])
    assert gate(*_files(human, baseline, elsewhere)) == 2
    assert "no id common" in capsys.readouterr().err
    scale = _write(tmp_path / "scale.csv", [f"case-{i:03d}" for i in range(N)], ["3"] * N)
    assert gate(*_files(human, baseline, scale)) == 2
    assert "share no label" in capsys.readouterr().err
    scores = _write(tmp_path / "scores.csv", [f"case-{i:03d}" for i in range(N)], ["0.25"] * N)
    assert gate(*_files(human, baseline, scores)) == 2
    assert "continuous scores" in capsys.readouterr().err
    assert gate(*_files(human, baseline, candidate), "--fail-if", "kapa < 1") == 2
    assert "valid names" in capsys.readouterr().err
    assert gate(*_files(human, baseline, candidate), "--max-drop", "-0.1") == 2
    assert gate("--baseline", baseline, "--candidate", candidate) == 2  # --labels missing


def test_graded_records_given_as_the_labels_exit_2(tmp_path, capsys):
    records = grade_examples_offline(tmp_path / "records.jsonl")
    assert gate("--baseline", records, "--candidate", records, "--labels", records) == 2
    assert "graded records" in capsys.readouterr().err
    human = EXAMPLES / "human_labels.csv"
    assert gate("--baseline", records, "--candidate", records, "--labels", human) == 0
