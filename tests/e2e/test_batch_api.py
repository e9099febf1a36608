"""Batch grading end to end on the loopback test server's /v1/files and /v1/batches:
the same records as the online path, export -> batch -> import, failures, resume, cache."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from judge.batch.api import Polling, collect_batches, submit_batches
from judge.batch.format import custom_id_for
from judge.batch.manifest import load_manifest
from judge.cli import main
from judge.config import JudgeConfig
from judge.rubric import load_rubric
from judge.testing import ChatRequest, FakeOpenAIServer, FaultPlan
from tests.helpers import REPO, TRIAL_CONTEXT, write_jsonl

pytestmark = pytest.mark.slow  # Batch API runs against the loopback test server (.ci/slow runs it)

MODEL = "judge-test-2024-01-01"
CASES = REPO / "examples" / "cases.jsonl"
PAIRS = REPO / "examples" / "pairs.jsonl"
VERDICTS = {
    "faithful": {"claims": [{"claim": "14 days.", "verdict": "supported", "evidence": "14"}]},
    "mixed": {
        "claims": [
            {"claim": "14 days.", "verdict": "supported", "evidence": "14"},
            {"claim": "A gift.", "verdict": "contradicted", "evidence": "none"},
        ]
    },
    "unsure": {"claims": [{"claim": "Red.", "verdict": "not_enough_information", "evidence": ""}]},
    "empty": {"claims": []},
}


def scripted(chat: ChatRequest) -> dict[str, Any]:
    """The verdict named by the answer's first word: the same for online and batch."""
    return VERDICTS[str(chat.payload.get("answer", "faithful")).split()[0]]


def scripted_cases(tmp_path: Path, count: int = 12) -> Path:
    kinds = list(VERDICTS)
    rows = [
        {
            "id": f"case {i}#{'é' if i % 5 == 0 else ''}",  # odd ids: space, '#', non-ASCII
            "question": "How long is the free trial?",
            "contexts": [TRIAL_CONTEXT],
            "answer": f"{kinds[i % len(kinds)]} answer number {i}.",
            "slices": ["even" if i % 2 == 0 else "odd"],
        }
        for i in range(count)
    ]
    return write_jsonl(tmp_path / "cases.jsonl", rows)


def env_for(server: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    env = {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "JUDGE_MODEL": MODEL,
        "JUDGE_BATCH_POLL": "0.02",
        "JUDGE_BATCH_MAX_WAIT": "30",  # a bound on every wait, never reached when all is well
    }
    return env | extra


def judge(capsys: pytest.CaptureFixture[str], env: dict[str, str], *argv: Any) -> tuple:
    code = main([str(a) for a in argv], env)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def contract(path: Path) -> list[tuple[Any, ...]]:
    """What must not differ between the online and the batch paths."""
    return [
        (r["id"], r["status"], r["label"], r["score"], r["verdict"], r["slices"], r["judge"])
        for r in records(path)
    ]


def grade_online(capsys, env, source: Path, out: Path, rubric: str = "faithfulness") -> None:
    code, _, err = judge(capsys, env, "grade", source, "--rubric", rubric, "-o", out, "--no-cache")
    assert code == 0, err


@pytest.mark.parametrize(
    ("rubric", "source"), [("faithfulness", CASES), ("relevance", CASES), ("pairwise", PAIRS)]
)
def test_batch_api_records_equal_the_online_records(
    server_factory, capsys, tmp_path, rubric, source
):
    server = server_factory()
    env = env_for(server)
    grade_online(capsys, env, source, tmp_path / "online.jsonl", rubric)
    code, out, err = judge(
        capsys, env, "grade", source, "--rubric", rubric, "-o", tmp_path / "batch.jsonl",
        "--batch-api", "--no-cache",
    )  # fmt: skip
    assert code == 0, err
    assert out.split()[0].startswith("batch-test-")  # the batch id, first on stdout
    assert "batches: 1 completed" in err
    assert contract(tmp_path / "batch.jsonl") == contract(tmp_path / "online.jsonl")
    assert server.stats.requests_by_path["/v1/batches"] == 1


def test_scripted_verdicts_and_odd_ids_give_the_same_records(server_factory, capsys, tmp_path):
    server = server_factory(responder=scripted)
    env = env_for(server)
    source = scripted_cases(tmp_path)
    grade_online(capsys, env, source, tmp_path / "online.jsonl")
    code, _, err = judge(
        capsys, env, "grade", source, "--rubric", "faithfulness", "-o", tmp_path / "b.jsonl",
        "--batch-api", "--no-cache",
    )  # fmt: skip
    assert code == 0, err
    got = contract(tmp_path / "b.jsonl")
    assert got == contract(tmp_path / "online.jsonl")
    assert {r[1] for r in got} == {"ok", "abstained"} and {r[2] for r in got} >= {"unfaithful"}


def run_server_batch(server: FakeOpenAIServer, requests: Path, results: Path) -> None:
    """What a user does by hand: upload, create, wait, download (bounded)."""
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    uploaded = client.files.create(file=requests.open("rb"), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    for _ in range(1000):
        batch = client.batches.retrieve(batch.id)
        if batch.status == "completed":
            break
        time.sleep(0.01)
    assert batch.status == "completed" and batch.output_file_id
    results.write_bytes(client.files.content(batch.output_file_id).content)


def test_export_run_import_gives_the_online_records(server_factory, capsys, tmp_path):
    server = server_factory(responder=scripted)
    env = env_for(server)
    source = scripted_cases(tmp_path)
    grade_online(capsys, env, source, tmp_path / "online.jsonl")
    requests = tmp_path / "requests.jsonl"
    code, out, err = judge(
        capsys, env, "grade", source, "--rubric", "faithfulness", "--export-batch", requests,
        "--no-cache",
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == f"{requests}\t12 requests"
    server.reset_stats()
    run_server_batch(server, requests, tmp_path / "results.jsonl")
    code, _, err = judge(
        capsys, env, "grade", source, "--rubric", "faithfulness", "-o", tmp_path / "imp.jsonl",
        "--import-batch", tmp_path / "results.jsonl", "--no-cache",
    )  # fmt: skip
    assert code == 0, err
    assert "warning" not in err
    assert contract(tmp_path / "imp.jsonl") == contract(tmp_path / "online.jsonl")
    assert server.stats.requests == 12  # the import itself sent nothing


def test_failed_missing_and_unknown_lines_are_records_and_warnings(
    server_factory, capsys, tmp_path
):
    server = server_factory(responder=scripted)
    env = env_for(server)
    source = scripted_cases(tmp_path, count=6)
    requests, results = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    judge(capsys, env, "grade", source, "--rubric", "faithfulness", "--export-batch", requests)
    run_server_batch(server, requests, results)
    lines = [json.loads(line) for line in results.read_text("utf-8").splitlines()]
    by_id = {line["custom_id"]: line for line in lines}
    ids = [r["id"] for r in records(source)]
    failed, missing = by_id[custom_id_for(ids[1])], ids[2]
    failed["response"] = {
        "status_code": 500,
        "request_id": "r",
        "body": {"error": {"message": "x"}},
    }
    kept = [line for line in lines if line["custom_id"] != custom_id_for(missing)]
    kept.append(dict(lines[0], custom_id="no-such-case"))
    write_jsonl(results, kept)
    out = tmp_path / "out.jsonl"
    code, _, err = judge(
        capsys, env, "grade", source, "--rubric", "faithfulness", "-o", out,
        "--import-batch", results, "--no-cache",
    )  # fmt: skip
    # 2 of 6 cases failed, over the default --max-error-rate 0.05: exit 1 since issue 16
    # (it was 0), with the records kept and one line naming the commonest cause
    assert code == 1
    assert "the run failed: 2 of 6 cases failed (api_error 2" in err
    got = records(out)
    assert [r["id"] for r in got] == ids  # every case, in input order
    status = {r["id"]: (r["status"], r["error"]) for r in got}
    assert status[ids[1]][0] == "api_error" and "HTTP 500" in status[ids[1]][1]
    assert status[missing][0] == "api_error" and "no result line" in status[missing][1]
    assert sum(s == "api_error" for s, _ in status.values()) == 2
    assert "1 result line(s) match no case in the input" in err and "'no-such-case'" in err
    assert "2 case(s) failed or have no result line" in err


def test_cache_first_only_misses_are_sent(server_factory, capsys, tmp_path):
    server = server_factory(responder=scripted)
    cache = tmp_path / "cache"
    env = env_for(server)
    source = scripted_cases(tmp_path, count=10)
    out = tmp_path / "out.jsonl"
    args = ("grade", source, "--rubric", "faithfulness", "--cache-dir", cache)
    judge(capsys, env, *args, "-o", tmp_path / "first.jsonl", "--limit", "4")
    code, _, err = judge(capsys, env, *args, "-o", out, "--batch-api")
    assert code == 0, err
    assert "4 case(s) answered from the cache" in err
    (batch,) = server.batch_api.batches.values()
    assert batch["request_counts"]["total"] == 6
    assert [r["cached"] for r in records(out)] == [True] * 4 + [False] * 6
    code, out_text, err = judge(capsys, env, *args, "-o", out, "--batch-api", "--overwrite")
    assert code == 0 and "no batch: nothing to send" in out_text
    assert all(r["cached"] for r in records(out)) and len(server.batch_api.batches) == 1


def test_a_run_whose_process_ended_is_resumed_with_batch_fetch(server_factory, capsys, tmp_path):
    server = server_factory(responder=scripted)
    server.batch_api.hold = True
    source = scripted_cases(tmp_path, count=5)
    out = tmp_path / "out.jsonl"
    submit_only = env_for(server, JUDGE_BATCH_MAX_WAIT="0")
    argv = ("grade", source, "--rubric", "faithfulness", "-o", out, "--batch-api", "--no-cache")
    code, stdout, err = judge(capsys, submit_only, *argv)
    assert code == 0 and "still running" in err and not out.exists()
    batch_id = stdout.split()[0]
    assert load_manifest(out).batch_ids == [batch_id]
    code, _, err = judge(capsys, submit_only, *argv)
    assert code == 2 and "judge batch fetch" in err  # no second submission by mistake
    code, stdout, _ = judge(capsys, submit_only, "batch", "status", batch_id, "-o", out)
    assert code == 0 and "in_progress" in stdout
    server.batch_api.hold = False
    env = env_for(server, OPENAI_BASE_URL="")  # the manifest knows the endpoint
    code, _, err = judge(capsys, env, "batch", "fetch", batch_id, "-o", out, "--no-cache")
    assert code == 0, err
    grade_online(capsys, env_for(server), source, tmp_path / "online.jsonl")
    assert contract(out) == contract(tmp_path / "online.jsonl")
    assert load_manifest(out).fetched


def test_an_expired_batch_leaves_failed_records_with_the_reason(server_factory, capsys, tmp_path):
    server = server_factory(responder=scripted)
    server.batch_api.expire_after = 3
    server.batch_api.concurrency = 1
    out = tmp_path / "out.jsonl"
    code, _, err = judge(
        capsys, env_for(server), "grade", scripted_cases(tmp_path, count=8), "--rubric",
        "faithfulness", "-o", out, "--batch-api", "--no-cache",
    )  # fmt: skip
    assert code == 1, err  # 5 of 8 failed: exit 1 since issue 16 (was 0), records kept
    assert "commonest cause (5 cases)" in err and "batch_expired" in err
    got = records(out)
    assert len(got) == 8 and sum(r["status"] in ("ok", "abstained") for r in got) == 3
    failed = [r for r in got if r["status"] == "api_error"]
    assert len(failed) == 5 and all("batch_expired" in r["error"] for r in failed)
    assert "batches: 1 expired" in err


async def test_requests_are_split_into_several_batches_within_the_limits(server_factory, tmp_path):
    server = server_factory(responder=scripted)
    rubric = load_rubric("faithfulness")
    config = JudgeConfig(model=MODEL, base_url=server.base_url, use_cache=False)
    source = scripted_cases(tmp_path, count=10)
    out = tmp_path / "out.jsonl"
    manifest = await submit_batches(rubric, config, source, out, max_requests=4)
    assert manifest.requests == [4, 4, 2] and len(manifest.batch_ids) == 3
    report = await collect_batches(
        manifest, rubric, config, polling=Polling(initial=0.02, max_wait=30)
    )
    assert report is not None and report.summary["status"] == {"ok": 8, "abstained": 2}
    assert [r["id"] for r in records(out)] == [r["id"] for r in records(source)]


def test_batch_has_no_repair_round_trip(server_factory, capsys, tmp_path):
    server = server_factory(faults=FaultPlan(rate_malformed=1.0))
    source = write_jsonl(tmp_path / "in.jsonl", [json.loads(CASES.read_text().splitlines()[0])])
    out = tmp_path / "out.jsonl"
    argv = ("grade", source, "--rubric", "faithfulness", "--no-cache")
    judge(capsys, env_for(server), *argv, "-o", tmp_path / "online.jsonl")
    judge(capsys, env_for(server), *argv, "-o", out, "--batch-api")
    assert records(tmp_path / "online.jsonl")[0]["status"] == "ok"  # repaired online
    (record,) = records(out)
    assert record["status"] == "parse_error" and record["raw"].startswith('{"claims"')


def test_a_bad_key_stops_the_batch_run_with_exit_1(server_factory, capsys, tmp_path):
    server = server_factory(api_key="right-key")
    code, _, err = judge(
        capsys, env_for(server, OPENAI_API_KEY="wrong-key"), "grade", CASES, "--rubric",
        "faithfulness", "-o", tmp_path / "out.jsonl", "--batch-api", "--no-cache",
    )  # fmt: skip
    assert code == 1 and "authentication failed" in err and "wrong-key" not in err


@pytest.mark.parametrize(
    "extra",
    [
        ["--batch-api", "--offline"],
        ["--export-batch", "r.jsonl", "--import-batch", "x.jsonl"],
    ],
)
def test_batch_usage_errors_exit_2(capsys, tmp_path, extra):
    argv = ["grade", str(CASES), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")]
    try:
        code = main(argv + extra, {"JUDGE_MODEL": MODEL})
    except SystemExit as exc:  # argparse: the flags are mutually exclusive
        code = int(exc.code or 0)
    assert code == 2


async def test_a_password_in_the_base_url_never_reaches_the_manifest(server_factory, tmp_path):
    """Seen in review of issue 16: the manifest stored --base-url as given."""
    server = server_factory(responder=scripted)
    secret = "pw-9f8e7d6c5b"
    with_password = server.base_url.replace("http://", f"http://user:{secret}@")
    config = JudgeConfig(model=MODEL, base_url=with_password, use_cache=False)
    out = tmp_path / "out.jsonl"
    manifest = await submit_batches(
        load_rubric("faithfulness"), config, scripted_cases(tmp_path, count=2), out
    )
    text = (tmp_path / "out.jsonl.batch.json").read_text("utf-8")
    assert secret not in text and "user" not in text
    assert manifest.judge["base_url"] == server.base_url
