"""Label files, the report writer and the command line, end to end on small files."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from calibration import CalibrationInputError, calibrate, read_labels, write_report
from calibration.agreement.annotators import TIED
from calibration.decisions.plan import plan_sample_size, simulate_interval_width
from judge.cli._calibrate import add_arguments, run
from tests.calibration_sets import DESIGN_KEYS

FAST = {"n_bootstrap": 100, "seed": 0}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text.strip() + "\n", encoding="utf-8")
    return path


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="judge calibrate")
    add_arguments(parser)
    return run(parser.parse_args([str(a) for a in argv]))


def graded(case_id: str, label: str | None, score: float | None, status: str = "ok") -> dict:
    return {
        "id": case_id,
        "rubric": "faithfulness",
        "status": status,
        "label": label,
        "score": score,
        "verdict": None,
        "error": None if status == "ok" else "bad json",
    }


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    human = ["faithful", "unfaithful"] * 10
    judge_rows = [
        graded(f"c{i:02d}", h, 1.0 if h == "faithful" else 0.25) for i, h in enumerate(human)
    ]
    judge_rows[3] = graded("c03", "faithful", 0.9)  # a false pass
    judge_rows[4] = graded("c04", None, None, status="parse_error")
    judge_rows.append(graded("extra-judge", "faithful", 1.0))
    human_rows = [
        {"id": f"c{i:02d}", "label": h, "slice": "a" if i < 10 else "b"}
        for i, h in enumerate(human)
    ] + [{"id": "extra-human", "label": "faithful"}]
    return (
        write_jsonl(tmp_path / "judge.jsonl", judge_rows),
        write_jsonl(tmp_path / "human.jsonl", human_rows),
    )


def test_graded_records_join_with_exclusions_and_unmatched_listed(files):
    r = calibrate(*files, **FAST)
    assert r["n"] == 19
    assert r["excluded"]["judge"] == {"status parse_error": 1}
    assert r["excluded"]["judge_ids"] == {"status parse_error": ["c04"]}
    assert r["unmatched"] == {
        "judge_only": 1,
        "human_only": 1,
        "judge_only_ids": ["extra-judge"],
        "human_only_ids": ["extra-human"],
    }
    assert r["labels"] == ["unfaithful", "faithful"]
    assert r["binary"]["positive_label"] == "faithful"
    assert r["disagreements"][0] == {"id": "c03", "human": "unfaithful", "judge": "faithful"}


def test_report_files_are_strict_json_markdown_and_png(files, tmp_path):
    r = calibrate(*files, slice_field="slice", **FAST)
    paths = write_report(r, tmp_path / "out")
    assert [p.name for p in paths] == ["calibration.json", "report.md", "confusion.png"]

    def refuse(constant: str):
        raise AssertionError(f"non-strict JSON constant {constant}")

    data = json.loads(paths[0].read_text(), parse_constant=refuse)
    assert set(data) >= DESIGN_KEYS
    assert set(data["slices"]) == {"a", "b"}
    assert data["slices"]["a"]["n"] + data["slices"]["b"]["n"] == data["n"]
    md = paths[1].read_text()
    assert "Readiness:" in md and "c03" in md and "| human \\ judge |" in md
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_undefined_kappa_is_null_with_reason_and_not_ready(tmp_path):
    judge = write_csv(tmp_path / "j.csv", "id,label\n" + "\n".join(f"x{i},pass" for i in range(8)))
    human = write_csv(tmp_path / "h.csv", "id,label\n" + "\n".join(f"x{i},pass" for i in range(8)))
    r = calibrate(judge, human, **FAST)
    assert math.isnan(r["kappa"]) and r["kappa_ci95"] is None
    assert r["readiness"] == "not_ready"
    assert r["readiness_reasons"][0].startswith("kappa undefined: the labels do not vary")
    written = json.loads(write_report(r, tmp_path / "o")[0].read_text())
    assert written["kappa"] is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": "a", "label": "x"}\n{"id": "a", "label": "y"}\n', "h.jsonl:2: duplicate id 'a'"),
        ('{"id": "a", "label": "x"}\n{"label": "y"}\n', "h.jsonl:2: missing id"),
        ('{"id": "a", "label": "x"}\nnot json\n', "h.jsonl:2: not valid JSON"),
        ('{"id": "a", "grade": "x"}\n', "h.jsonl:1: no field 'label'"),
        ('{"id": "a", "label": ["x"]}\n', "h.jsonl:1: label must be a single value"),
    ],
)
def test_bad_input_names_file_line_and_problem(tmp_path, text, message):
    path = tmp_path / "h.jsonl"
    path.write_text(text)
    with pytest.raises(CalibrationInputError, match=message.replace("[", r"\[")):
        read_labels(path)


def test_csv_line_numbers_and_missing_values_counted(tmp_path):
    path = write_csv(tmp_path / "h.csv", "id,label\na,x\nb,\nc,y")
    labels = read_labels(path)
    assert [r.id for r in labels.records] == ["a", "c"]
    assert labels.excluded == {"no label": ["b"]}
    assert labels.records[1].line == 4


def test_cli_writes_report_and_prints_summary(files, tmp_path, capsys):
    out = tmp_path / "report"
    assert run_cli(*files, "-o", out, "--bootstrap", "100") == 0
    printed = capsys.readouterr().out
    assert "n = 19 matched" in printed and "kappa = " in printed and "readiness:" in printed
    assert sorted(p.name for p in out.iterdir()) == [
        "calibration.json",
        "confusion.png",
        "report.md",
    ]


def test_cli_no_overlap_is_exit_2(tmp_path, capsys):
    judge = write_csv(tmp_path / "j.csv", "id,label\na,x\nb,y")
    human = write_csv(tmp_path / "h.csv", "id,label\nc,x\nd,y")
    assert run_cli(judge, human, "-o", tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no id in common" in err
    assert run_cli(tmp_path / "missing.csv", human) == 2


def test_numeric_judge_against_text_labels_needs_a_threshold(tmp_path):
    judge = write_csv(tmp_path / "j.csv", "id,score\na,0.9\nb,0.2\nc,0.7\nd,0.4\ne,0.65")
    human = write_csv(tmp_path / "h.csv", "id,label\na,pass\nb,fail\nc,fail\nd,fail\ne,pass")
    with pytest.raises(CalibrationInputError, match="--threshold"):
        calibrate(judge, human, judge_field="score", **FAST)
    fixed = calibrate(judge, human, judge_field="score", threshold=0.5, **FAST)
    assert fixed["confusion_matrix"]["matrix"] == [[2, 1], [0, 2]]
    assert fixed["threshold"]["value"] == 0.5 and not fixed["threshold"]["fitted"]
    fitted = calibrate(judge, human, judge_field="score", fit_threshold=True, **FAST)
    # Cuts 0.9 (kappa 0.545) and 0.65 (0.615): the fitted cut is the better one.
    assert fitted["threshold"]["value"] == 0.65
    assert fitted["threshold"]["in_sample"] is True
    assert fitted["kappa"] >= fixed["kappa"]
    assert any("in-sample" in reason for reason in fitted["readiness_reasons"])


def test_two_annotators_use_cohen_and_majority_ties_are_kept_and_listed(tmp_path):
    human = write_csv(
        tmp_path / "h.csv",
        "id,annotator,label\n"
        + "\n".join(
            [
                "a,ann1,y",
                "a,ann2,y",
                "b,ann1,n",
                "b,ann2,n",
                "c,ann1,y",
                "c,ann2,n",
                "d,ann1,n",
                "d,ann2,n",
            ]
        ),
    )
    judge = write_csv(tmp_path / "j.csv", "id,label\na,y\nb,n\nc,y\nd,y")
    r = calibrate(judge, human, **FAST)
    assert r["inter_annotator"]["method"] == "cohen_kappa"
    assert r["inter_annotator"]["ceiling"] == pytest.approx(0.5)
    # The tie on c is kept, settled by the documented rule (the first label in the order,
    # "n" before the pass label "y"), counted and listed; nothing is excluded.
    assert r["excluded"]["human_ids"] == {}
    assert r["inter_annotator"]["adjudicated_ids"] == {TIED: ["c"]}
    assert r["n"] == 4 and r["unmatched"]["judge_only"] == 0
    assert r["confusion_matrix"]["matrix"] == [[1, 2], [0, 1]]  # c and d: human n, judge y


def test_label_plan_formula_agrees_with_simulation(capsys):
    plan = plan_sample_size(0.6, 0.2, prevalence=0.5)
    assert 200 < plan.n < 300
    assert simulate_interval_width(plan.n, 0.6, n_simulations=1500) == pytest.approx(0.2, rel=0.08)
    skewed = plan_sample_size(0.6, 0.2, prevalence=0.1)
    assert skewed.n > plan.n
    assert run_cli("--plan", "--kappa", "0.6", "--width", "0.2") == 0
    assert f"{plan.n} labelled cases" in capsys.readouterr().out
