"""Labels and sampling (issue 37): probes take `--limit` and `--sample` as `grade` does
(the same cases); `--human-labels` on a small sample whose scale labels simply disagree
says "too few cases in common", not "share no label"; a trimmed input with the fuller
label file works as `--limit` does, the labels of cases outside it ignored and counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.helpers import REPO, read_jsonl

CASES = REPO / "examples" / "cases.jsonl"
LABELS = REPO / "examples" / "human_relevance.csv"


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str]:
    code = main([str(a) for a in args], env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("choose", [["--limit", "4"], ["--sample", "5", "--sample-seed", "3"]])
def test_a_probe_takes_the_cases_grade_takes(
    choose: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = tmp_path / "graded.jsonl"
    code, _ = run(
        tmp_path,
        capsys,
        "grade",
        CASES,
        "--rubric",
        "relevance",
        "--offline",
        "-o",
        graded,
        *choose,
    )
    assert code == 0
    report = tmp_path / "repeat.json"
    code, out = run(
        tmp_path,
        capsys,
        "probe",
        "repeat",
        CASES,
        "--rubric",
        "relevance",
        "--offline",
        "--repeats",
        "2",
        "-o",
        report,
        *choose,
    )
    assert code == 0, out
    probed = json.loads(report.read_text())
    records = read_jsonl(graded)
    assert probed["cases"] == len(records) == int(choose[1])
    scored = sorted(r["id"] for r in records if r["score"] is not None)  # abstained: none
    assert sorted(probed["spread_by_case"]) == scored
    assert probed["selection"].startswith(choose[0]) and "of 43" in probed["selection"]
    assert choose[0] in report.with_suffix(".md").read_text()


def test_a_probe_refuses_a_limit_below_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        tmp_path,
        capsys,
        "probe",
        "repeat",
        CASES,
        "--rubric",
        "relevance",
        "--offline",
        "--limit",
        "0",
    )
    assert code == 2 and "--limit must be at least 1" in out


def test_a_small_sample_of_disagreeing_scale_labels_is_too_few_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = tmp_path / "graded.jsonl"
    code, _ = run(
        tmp_path,
        capsys,
        "grade",
        CASES,
        "--rubric",
        "relevance",
        "--offline",
        "-o",
        graded,
        "--limit",
        "2",
    )
    judged = {r["id"]: r["label"] for r in read_jsonl(graded)}
    other = {
        label: next(x for x in "12345" if x not in judged.values()) for label in judged.values()
    }
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{other[v]}\n" for i, v in judged.items()))
    code, out = run(
        tmp_path,
        capsys,
        "grade",
        CASES,
        "--rubric",
        "relevance",
        "--offline",
        "-o",
        tmp_path / "again.jsonl",
        "--limit",
        "2",
        "--human-labels",
        labels,
    )
    assert code == 0, out
    assert "too few cases in common" in out and "share no label" not in out
    code, out = run(tmp_path, capsys, "calibrate", graded, labels, "-o", tmp_path / "cal")
    assert code == 2
    assert "too few cases in common" in out and "share no label" not in out


def test_a_trimmed_input_with_the_fuller_label_file_works_as_limit_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trimmed = tmp_path / "trimmed.jsonl"
    trimmed.write_text("".join(f"{x}\n" for x in CASES.read_text().splitlines()[:12]))
    summaries = {}
    for name, source, extra in (("trimmed", trimmed, []), ("limit", CASES, ["--limit", "12"])):
        summary = tmp_path / f"{name}.json"
        code, out = run(
            tmp_path,
            capsys,
            "grade",
            source,
            "--rubric",
            "relevance",
            "--offline",
            "-o",
            tmp_path / f"{name}.records.jsonl",
            "--human-labels",
            LABELS,
            "--summary",
            summary,
            *extra,
        )
        assert code == 0, out
        summaries[name] = json.loads(summary.read_text())
        ignored = summaries[name]["ppi"]["counts"]["human_only"]
        assert ignored > 0
        assert f"{ignored} label(s) of cases not graded in this run ignored" in out
    assert summaries["trimmed"]["ppi"] == summaries["limit"]["ppi"]
