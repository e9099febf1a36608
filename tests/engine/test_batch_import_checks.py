"""Issue 20 items 16 and 14 (a deeply nested line): `--import-batch` refuses results that
another model answered, prices what it imports at the Batch API's (half) price, and a
results line nested too deeply to read is reported like any unreadable line, not a
traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.batch.replay import same_model
from judge.cli import main
from judge.engine.pricing import PRICES_PER_MILLION
from tests.engine.test_batch import ok_line
from tests.helpers import FAITHFUL_VERDICT, case, read_jsonl, write_jsonl

IDS = ["a", "b", "c"]


def lines_from(model: str) -> list[dict[str, object]]:
    lines = [ok_line(i, FAITHFUL_VERDICT) for i in IDS]
    for line in lines:
        line["response"]["body"]["model"] = model  # type: ignore[index]
    return lines


def import_batch(tmp_path: Path, model: str, results: Path, *extra: str) -> int:
    source = write_jsonl(tmp_path / "in.jsonl", [case(i) for i in IDS])
    argv = ["grade", str(source), "--rubric", "faithfulness", "--model", model]
    argv += ["--import-batch", str(results), "-o", str(tmp_path / "out.jsonl"), "--no-cache"]
    return main([*argv, *extra], env={})


def test_results_of_another_model_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", lines_from("llama-3.1-8b-instruct"))
    assert import_batch(tmp_path, "gpt-4o-2024-08-06", results) == 2
    err = capsys.readouterr().err
    assert f"{results}:1: the results were answered by model 'llama-3.1-8b-instruct'" in err
    assert "--model 'gpt-4o-2024-08-06'" in err and "Traceback" not in err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_dated_snapshot_of_the_model_is_the_same_model() -> None:
    assert same_model("gpt-4o-2024-08-06", "gpt-4o")
    assert same_model("gpt-4o-2024-08-06", "openai/gpt-4o-2024-08-06")
    assert not same_model("gpt-4o-mini-2024-07-18", "gpt-4o-2024-08-06")
    assert same_model("GPT-4o-2024-08-06", "openai/gpt-4o")  # case and provider aside


def test_another_model_whose_name_starts_like_the_judges_is_not_the_same_model() -> None:
    """A longer name that is not a snapshot's date is another model: results answered by
    gpt-4o-mini must not be recorded as gpt-4o's verdicts (the certificate's rule)."""
    assert not same_model("gpt-4o-mini", "gpt-4o")
    assert not same_model("gpt-4o-mini-2024-07-18", "gpt-4o")
    assert not same_model("llama-3.1-8b-instruct", "llama-3.1-8b")
    assert same_model("gpt-4-0613", "gpt-4")
    assert not same_model("llama-3.1-8b", "gpt-4o")


def test_imported_results_are_priced_at_the_batch_price(tmp_path: Path) -> None:
    model = "gpt-4o-2024-08-06"
    results = write_jsonl(tmp_path / "results.jsonl", lines_from(model))
    summary = tmp_path / "s.json"
    assert import_batch(tmp_path, model, results, "--summary", str(summary)) == 0
    data = json.loads(summary.read_text())
    prompt, completion = data["tokens"]["prompt"], data["tokens"]["completion"]
    assert (prompt, completion) == (30, 15)  # ok_line's usage, three lines
    listed = PRICES_PER_MILLION["gpt-4o"]
    batch = (prompt * listed[0] + completion * listed[1]) / 2 / 1_000_000
    assert data["estimated_cost_usd"] == pytest.approx(batch, abs=1e-6)  # online: 2x


def test_a_deeply_nested_results_line_is_reported_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = "judge-test-2024-01-01"
    results = write_jsonl(tmp_path / "results.jsonl", lines_from(model))
    with results.open("a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    assert import_batch(tmp_path, model, results) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{results}:4" in err
    assert [r["status"] for r in read_jsonl(tmp_path / "out.jsonl")] == ["ok"] * 3
