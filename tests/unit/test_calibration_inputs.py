"""Label sets that cannot be compared are refused; what was compared is said (issue 16 items
8 and 17): each test reproduces a report of the issue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calibration import CalibrationInputError, calibrate
from judge import Judge, JudgeConfig
from judge.cli import main

REPO = Path(__file__).resolve().parents[2]
HUMAN_FAITHFULNESS = REPO / "examples" / "human_labels.csv"


def exit_code(*argv: object) -> int:
    """``judge calibrate ...`` as the command line runs it; argparse's refusals included."""
    try:
        return main(["calibrate", *map(str, argv)])
    except SystemExit as stop:
        return int(stop.code or 0)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, Path]:
    """The rules judge's records of examples/cases.jsonl for two rubrics."""
    folder = tmp_path_factory.mktemp("graded")
    lines = (REPO / "examples" / "cases.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in lines]
    judge = Judge(JudgeConfig(use_cache=False))
    out = {}
    for rubric in ("faithfulness", "relevance"):
        records = judge.grade_many(cases, rubric)
        path = folder / f"{rubric}.jsonl"
        path.write_text("".join(r.model_dump_json() + "\n" for r in records))
        out[rubric] = path
    return out


def test_relevance_records_against_faithfulness_labels_are_refused(graded, tmp_path, capsys):
    # Issue 16 item 8: 1-5 against faithful/unfaithful gave "kappa 0.081", exit 0.
    assert exit_code(graded["relevance"], HUMAN_FAITHFULNESS, "-o", tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "share no label" in err
    assert "'faithful'" in err and "'5'" in err and "ignoring case" in err
    assert not (tmp_path / "o").exists()


def test_labels_differing_in_case_and_spaces_are_one_label(tmp_path, capsys):
    # Issue 16 item 8: `Faithful` vs `faithful` was compared as two labels.
    human = tmp_path / "h.csv"
    human.write_text("id,label\na,faithful\nb,unfaithful\nc,faithful\nd,unfaithful\n")
    judge = tmp_path / "j.csv"
    judge.write_text("id,label\na,Faithful\nb, UNFAITHFUL \nc,Unfaithful\nd,Unfaithful\n")
    r = calibrate(judge, human, n_bootstrap=0)
    assert r["labels"] == ["unfaithful", "faithful"]  # the human file's spelling
    assert r["confusion_matrix"]["matrix"] == [[2, 0], [1, 1]]
    assert r["kappa"] == pytest.approx(0.5)
    assert exit_code(judge, human, "-o", tmp_path / "o", "--bootstrap", "0") == 0
    out = capsys.readouterr().out
    assert "labels: compared after trimming whitespace and ignoring case" in out


def test_swapped_files_are_refused_with_the_fix(graded, tmp_path, capsys):
    # Issue 16 item 8: the two files swapped were accepted and the matrix mislabelled.
    assert exit_code(HUMAN_FAITHFULNESS, graded["faithfulness"], "-o", tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert "looks like a judge's graded records" in err
    assert f"judge calibrate {graded['faithfulness']} HUMAN_LABELS" in err
    with pytest.raises(CalibrationInputError, match="rubric, rubric_sha256, status"):
        calibrate(HUMAN_FAITHFULNESS, graded["faithfulness"])


def test_terminal_says_what_was_unmatched_excluded_and_skipped(tmp_path, capsys):
    rows = ["id,score,dialogue"]
    # Dialogue d0 is constant on the human side: skipped; d1 and d2 are used.
    human = [(0, 2), (0, 2), (1, 1), (1, 3), (2, 1), (2, 2), (2, 3)]
    rows += [f"c{i},{h},d{g}" for i, (g, h) in enumerate(human)] + ["h-only,2,d2"]
    (tmp_path / "h.csv").write_text("\n".join(rows) + "\n")
    judge = ["c0,1", "c1,3", "c2,1", "c3,2", "c4,1", "c5,3", "c6,3", "j-only,2", "j-blank,"]
    (tmp_path / "j.csv").write_text("id,score\n" + "\n".join(judge) + "\n")
    argv = [tmp_path / "j.csv", tmp_path / "h.csv", "--judge-field", "score"]
    argv += ["--human-field", "score", "--group-field", "dialogue", "-o", tmp_path / "o"]
    assert exit_code(*argv, "--bootstrap", "10") == 0
    out = capsys.readouterr().out
    assert "unmatched ids: 1 judge-only, 1 human-only" in out
    assert "excluded from the judge file: 1 (no score)" in out
    assert "per-group correlation over 2 groups (1 skipped as constant)" in out


def test_mae_only_when_both_sides_are_on_one_scale(graded, tmp_path):
    # The judge's relevance score is on 0..1; people rated 1..5.
    human = REPO / "examples" / "human_relevance.csv"
    apart = calibrate(graded["relevance"], human, judge_field="score", n_bootstrap=0)
    assert apart["mae"] is None and "not on one scale" in apart["scale_mismatch"]
    assert apart["correlation"]["spearman"] == apart["correlation"]["spearman"]  # defined
    same = calibrate(graded["relevance"], human, n_bootstrap=0)  # labels "1".."5"
    assert same["scale_mismatch"] is None and same["mae"] >= 0


def test_partial_overlap_is_compared_and_said(tmp_path, capsys):
    (tmp_path / "h.csv").write_text("id,label\na,yes\nb,no\nc,yes\n")
    (tmp_path / "j.csv").write_text("id,label\na,yes\nb,unsure\nc,no\n")
    assert exit_code(tmp_path / "j.csv", tmp_path / "h.csv", "-o", tmp_path / "o") == 0
    out = capsys.readouterr().out
    assert "only the judge used: ['unsure']" in out


@pytest.mark.parametrize(
    ("flag", "value", "code"),
    [
        ("--bootstrap", "0", 0),  # issue 16 item 17: IndexError, exit 1
        ("--bootstrap", "-1", 2),
        ("--bootstrap", "many", 2),
        ("--seed", "-3", 2),
        ("--width", "0", 2),
        ("--threshold", "nan", 2),
    ],
)
def test_flag_values_are_validated(tmp_path, capsys, flag, value, code):
    (tmp_path / "h.csv").write_text("id,label\na,pass\nb,fail\nc,pass\nd,fail\n")
    (tmp_path / "j.csv").write_text("id,label\na,pass\nb,fail\nc,fail\nd,fail\n")
    argv = [tmp_path / "j.csv", tmp_path / "h.csv", "-o", tmp_path / "o", flag, value]
    assert exit_code(*argv) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    if code == 0:
        data = json.loads((tmp_path / "o" / "calibration.json").read_text())
        assert data["kappa"] is not None and data["kappa_ci95"] is None
        assert "no interval" in data["readiness_reasons"][0]
    else:
        assert flag in captured.err
