"""The public-set converter behind the docs' rules-judge figures, on small upstream-shaped
files written here (the real dumps live outside the repository), and the docs page on the rules judge."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from benchmarks import public_sets
from judge.cli import main
from tests.helpers import REPO, read_jsonl


def _samples(batch: int, labels: list[list[str]]) -> list[dict]:
    """One sample per entry: the annotators' labels ([] = an annotator who flagged nothing)."""
    out = []
    for i, per_annotator in enumerate(labels):
        notes = [
            {"annotator_name": name, "label": [label]}
            for name, label in zip(("ann", "bob", "cy"), per_annotator, strict=False)
            if label
        ]
        out.append(
            {
                "sample_id": str(i),
                "source": f"Article {batch}-{i}. It rained on Monday.",
                "summary": f"It rained on Monday ({i}).",
                "annotations": str(notes),
                "meta_model": "m",
            }
        )
    return out


def _write_upstream(root: Path) -> None:
    fb = root / "external" / "faithbench" / "dev_annotations"
    fb.mkdir(parents=True)
    for batch in range(1, 17):
        # batch 1 expects two annotators: worst pooling over what they marked
        rows = [["Unwanted", ""], ["Benign", ""], ["Questionable", "Benign"], ["", ""]]
        if batch == 5:  # ids 40-49 of batch 5 are dropped, as the authors do
            rows = [["", ""]] * 41
        (fb / f"batch_{batch}_annotation.json").write_text(json.dumps(_samples(batch, rows)))
    lb = root / "external" / "llmbar" / "Dataset" / "LLMBar"
    result = Path("evaluators/GPT-4/Vanilla_NoRules/result.json")
    pair = [{"input": "Say hi.", "output_1": "Hi.", "output_2": "Bye.", "label": 1}]
    for sub in ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst"):
        (lb / sub / result).parent.mkdir(parents=True)
        (lb / sub / result).write_text(json.dumps(pair))
    for sub in ("Adversarial/GPTOut", "Adversarial/Manual"):
        (lb / sub / result).parent.mkdir(parents=True)
        (lb / sub / result).write_text(json.dumps([{**pair[0], "label": 2}]))
    tc = root / "external" / "topicalchat-closerlook" / "results" / "topical_chat"
    tc.mkdir(parents=True)
    items = [
        {"source": d, "system_output": "ok", "context": "fact", "scores": str({"coherence": s})}
        for d, s in (("dlg one", 2.5), ("dlg one", 1.0), ("dlg two", 3.0))
    ]
    (tc / "gpt3.5_coh_geval.json").write_text(json.dumps(items))


def _labels(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_public_sets_become_cases_and_labels(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    _write_upstream(data)
    assert public_sets.main([str(data), str(out)]) == 0
    cases = read_jsonl(out / "faithbench" / "cases.jsonl")
    labels = [r["label"] for r in _labels(out / "faithbench" / "human.csv")]
    assert len(cases) == 15 * 4 - 4 + 40  # batch 11 drops ids 0-9, batch 5 keeps 0-39
    assert labels[:4] == ["unfaithful", "faithful", "unfaithful", "faithful"]
    assert cases[0]["contexts"] == ["Article 1-0. It rained on Monday."]
    adversarial = _labels(out / "llmbar-adversarial" / "gold.csv")
    assert [r["label"] for r in adversarial] == ["A", "A", "B", "B"]
    assert read_jsonl(out / "llmbar-natural" / "cases.jsonl")[0]["answer_b"] == "Bye."
    human = _labels(out / "topicalchat" / "human.csv")
    assert [(r["id"], r["score"], r["dialogue"]) for r in human] == [
        ("tc-0000", "2.5", "dlg-000"),
        ("tc-0001", "1.0", "dlg-000"),
        ("tc-0002", "3.0", "dlg-001"),
    ]
    # the files are what the docs' commands grade and calibrate
    graded = tmp_path / "graded.jsonl"
    argv = ["grade", str(out / "faithbench" / "cases.jsonl"), "--rubric", "faithfulness"]
    assert main([*argv, "-o", str(graded)], env={}) == 0
    report = ["calibrate", str(graded), str(out / "faithbench" / "human.csv")]
    assert main([*report, "-o", str(tmp_path / "report")], env={}) in (0, 3)


def test_from_a_clone_llmbar_is_vendored_and_each_missing_set_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No DATA folder (a fresh clone): LLMBar comes from tests/data/public-sets, FaithBench
    and Topical-Chat are each named in one line with where to get them, exit 2."""
    out = tmp_path / "out"
    assert public_sets.main([str(tmp_path / "absent"), str(out)]) == 2
    captured = capsys.readouterr()
    assert "llmbar: 419 cases" in captured.out and "vendored" in captured.out
    lines = captured.err.splitlines()
    assert [line.split(":")[0] for line in lines] == ["faithbench", "topicalchat"]
    assert "batch_1_annotation.json" in lines[0] and "github.com/forrestbao/FaithBench" in lines[0]
    assert "gpt3.5_coh_geval.json" in lines[1] and "A-Closer-Look-To-LLM-Evaluation" in lines[1]
    assert not (out / "faithbench").exists() and not (out / "topicalchat").exists()
    # the vendored pairs are LLMBar's: Natural's gold labels equal the derived label file
    gold = _labels(out / "llmbar-natural" / "gold.csv")
    assert gold == _labels(REPO / "tests/data/calibration/llmbar-natural-gpt4/gold.csv")
    assert len(read_jsonl(out / "llmbar-adversarial" / "cases.jsonl")) == 319


def test_a_partial_dump_names_the_file_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    _write_upstream(data)
    (data / "external/faithbench/dev_annotations/batch_7_annotation.json").unlink()
    assert public_sets.main([str(data), str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("faithbench: missing ") and "batch_7_annotation.json" in line


def test_the_docs_say_how_far_to_trust_the_rules_judge() -> None:
    section = (REPO / "docs" / "rules-judge.md").read_text(encoding="utf-8").replace("\n$ ", "\n")
    for name in ("FaithBench", "LLMBar", "Topical-Chat", "examples/human_labels.csv"):
        assert name in section
    assert re.search(r"python -m benchmarks\.public_sets \S+/data public-sets", section)
    assert "not a gate" in section and "first" in section and "baseline" in section
    assert len(re.findall(r"^judge calibrate ", section, re.MULTILINE)) >= 5
