"""`judge grade --parquet` beside several rubrics and the batch paths (issue 23, noticed
after item 2): it was silently ignored there. With several rubrics the table holds every
rubric's records (the `rubric` column tells them apart); `--batch-api` and `--import-batch`
write it from the records they import; `--export-batch` writes no records, so it refuses
`--parquet` (exit 2) before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from tests.engine.test_batch import ok_line
from tests.helpers import FAITHFUL_VERDICT, REPO, case, read_jsonl, write_jsonl

pq = pytest.importorskip("pyarrow.parquet")  # the frames extra, in the dev environment

EXAMPLES = REPO / "examples" / "cases.jsonl"
MODEL = "judge-test-2024-01-01"


def table_ids(path: Path) -> list[tuple[str, str]]:
    return [(r["rubric"], r["id"]) for r in pq.read_table(path).to_pylist()]


def record_ids(*paths: Path) -> list[tuple[str, str]]:
    return [(f"{r['rubric']}@{r['rubric_version']}", r["id"]) for p in paths for r in read_jsonl(p)]


def test_several_rubrics_write_every_rubrics_records_into_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, table = tmp_path / "graded", tmp_path / "graded.parquet"
    args = ["grade", str(EXAMPLES), "--rubric", "faithfulness,relevance", "-o", str(out)]
    assert main([*args, "--parquet", str(table)], env={}) == 0
    expected = record_ids(out / "faithfulness.jsonl", out / "relevance.jsonl")
    assert len(expected) == 2 * 43
    assert table_ids(table) == expected
    rows = pq.read_table(table).to_pylist()
    assert {"claims", "supported_claims"} <= rows[0].keys()  # each rubric's own figures
    assert f"parquet: {table} ({len(expected)} records)" in capsys.readouterr().err


def test_a_table_named_like_a_records_file_of_the_pass_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "graded"
    args = ["grade", str(EXAMPLES), "--rubric", "faithfulness,relevance", "-o", str(out)]
    assert main([*args, "--parquet", str(EXAMPLES)], env={}) == 2
    assert "--parquet" in capsys.readouterr().err
    assert not out.exists()


def import_source(tmp_path: Path) -> tuple[Path, Path]:
    ids = ["a", "b", "c"]
    source = write_jsonl(tmp_path / "in.jsonl", [case(i) for i in ids])
    results = write_jsonl(tmp_path / "results.jsonl", [ok_line(i, FAITHFUL_VERDICT) for i in ids])
    return source, results


def test_import_batch_writes_the_table_of_the_imported_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, results = import_source(tmp_path)
    out, table = tmp_path / "out.jsonl", tmp_path / "out.parquet"
    args = ["grade", str(source), "--rubric", "faithfulness", "--model", MODEL, "--no-cache"]
    args += ["--import-batch", str(results), "-o", str(out), "--parquet", str(table)]
    assert main(args, env={}) == 0
    assert table_ids(table) == record_ids(out) and len(record_ids(out)) == 3
    assert f"parquet: {table} (3 records)" in capsys.readouterr().err


def test_export_batch_refuses_parquet_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = import_source(tmp_path)
    requests, table = tmp_path / "requests.jsonl", tmp_path / "out.parquet"
    args = ["grade", str(source), "--rubric", "faithfulness", "--model", MODEL]
    args += ["--export-batch", str(requests), "--parquet", str(table)]
    assert main(args, env={}) == 2
    err = capsys.readouterr().err
    assert "--parquet" in err and "--export-batch" in err and "Traceback" not in err
    assert not requests.exists() and not table.exists()


def test_batch_api_writes_the_table_once_the_batches_are_done(
    server_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = server_factory()
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "JUDGE_MODEL": MODEL,
        "JUDGE_BATCH_POLL": "0.02",
        "JUDGE_BATCH_MAX_WAIT": "30",  # a bound, never reached when all is well
    }
    out, table = tmp_path / "batch.jsonl", tmp_path / "batch.parquet"
    args = ["grade", str(EXAMPLES), "--rubric", "faithfulness", "-o", str(out), "--batch-api"]
    assert main([*args, "--no-cache", "--parquet", str(table)], env) == 0
    assert table_ids(table) == record_ids(out) and len(record_ids(out)) == 43
    assert f"parquet: {table} (43 records)" in capsys.readouterr().err


def test_a_batch_still_running_says_so_and_batch_fetch_writes_the_table(
    server_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`server.batch_api.hold` keeps the batch in progress and JUDGE_BATCH_MAX_WAIT=0 ends
    the wait at once (no timing: the batch cannot finish while held)."""
    server = server_factory()
    server.batch_api.hold = True
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "JUDGE_MODEL": MODEL,
        "JUDGE_BATCH_POLL": "0.02",
        "JUDGE_BATCH_MAX_WAIT": "0",
    }
    out, table = tmp_path / "batch.jsonl", tmp_path / "batch.parquet"
    args = ["grade", str(EXAMPLES), "--rubric", "faithfulness", "-o", str(out), "--batch-api"]
    assert main([*args, "--no-cache", "--parquet", str(table)], env) == 0
    captured = capsys.readouterr()
    assert f"--parquet {table} is not written yet: the batches are still running" in captured.err
    assert not table.exists()
    batch_id = captured.out.split()[0]
    server.batch_api.hold = False
    env["JUDGE_BATCH_MAX_WAIT"] = "30"  # a bound, never reached when all is well
    fetch = ["batch", "fetch", batch_id, "-o", str(out), "--no-cache", "--parquet", str(table)]
    assert main(fetch, env) == 0
    assert table_ids(table) == record_ids(out) and len(record_ids(out)) == 43
    assert main(["batch", "status", batch_id, "-o", str(out), "--parquet", str(table)], env) == 2
