"""The project's other paths against a real llama.cpp server (issue 37 point 1): a jury of
two jurors, a probe, `judge serve` (/v1/grade and a job), batch export and import, resume
after kill -9, and `judge calibrate` on the real records."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.llamacpp.support import (
    MODEL,
    OTHER_MODEL,
    REPO,
    STATUSES,
    TIMEOUT,
    check_records,
    grade_args,
    judge,
    model_args,
    read_jsonl,
    sent,
    server_url,
    short_cases,
    write_jsonl,
)
from tests.test_service_support import ServiceProcess, wait_for_job, write_config

pytestmark = pytest.mark.llamacpp


def write_jury(path: Path, max_tokens: int | None = 96) -> Path:
    """Two jurors: two aliases of the one model; `max_tokens` in their sampling (or none)."""
    sampling: dict[str, Any] = {"temperature": 0, "seed": 1}
    if max_tokens is not None:
        sampling["max_tokens"] = max_tokens
    jurors = [
        {"name": name, "model": model, "base_url": server_url(), "concurrency": 2,
         "sampling": sampling}
        for name, model in (("a", MODEL), ("b", OTHER_MODEL))
    ]  # fmt: skip
    path.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
    return path


def test_a_jury_of_two_jurors(tmp_path: Path, cache: Path) -> None:
    source = write_jsonl(tmp_path / "cases.jsonl", short_cases(2))
    out = tmp_path / "jury"
    done = judge("grade", str(source), "--rubric", "relevance", "--jury",
                 str(write_jury(tmp_path / "jury.yaml")), "-o", str(out),
                 "--timeout", f"{TIMEOUT:g}", "--cache-dir", str(cache),
                 "--max-error-rate", "1")  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    for name in ("a", "b"):
        own = read_jsonl(out / "jurors" / f"{name}.jsonl")
        assert [r["id"] for r in own] == ["c0", "c1"]
        assert {r["status"] for r in own} <= STATUSES
        assert all(r["judge"]["max_tokens"] == 96 for r in own)
        assert all(r["usage"]["completion_tokens"] <= 96 for r in own if not r["cached"])


def test_max_tokens_reaches_every_juror(tmp_path: Path, cache: Path) -> None:
    source = write_jsonl(tmp_path / "cases.jsonl", short_cases(1))
    out = tmp_path / "jury"
    done = judge("grade", str(source), "--rubric", "relevance", "--jury",
                 str(write_jury(tmp_path / "jury.yaml", max_tokens=None)), "-o", str(out),
                 "--max-tokens", "24", "--timeout", f"{TIMEOUT:g}",
                 "--cache-dir", str(cache), "--max-error-rate", "1")  # fmt: skip
    if done.returncode == 2:  # refusing the flag with --jury, naming it, is allowed
        assert "--max-tokens" in done.stderr
        return
    for name in ("a", "b"):
        for record in read_jsonl(out / "jurors" / f"{name}.jsonl"):
            assert record["usage"]["completion_tokens"] <= 24, record


def test_a_jury_where_nothing_parsed_prints_no_figures(tmp_path: Path, cache: Path) -> None:
    source = write_jsonl(tmp_path / "cases.jsonl", short_cases(2))
    out = tmp_path / "jury"
    done = judge("grade", str(source), "--rubric", "relevance", "--jury",
                 str(write_jury(tmp_path / "jury.yaml", max_tokens=16)), "-o", str(out),
                 "--timeout", f"{TIMEOUT:g}", "--cache-dir", str(cache),
                 "--max-error-rate", "1")  # fmt: skip
    said = done.stdout + done.stderr
    for word in ("kappa", "best juror", "None", "nan", "n_eff"):
        assert word not in said, (word, said)
    assert "decided" in said


def test_a_position_probe(tmp_path: Path, cache: Path) -> None:
    pair = {"id": "p1", "question": "How long is the return window?",
            "contexts": ["Returns are accepted within 30 days."],
            "answer_a": "30 days.", "answer_b": "60 days."}  # fmt: skip
    source = write_jsonl(tmp_path / "pairs.jsonl", [pair])
    out = tmp_path / "position.json"
    done = judge("probe", "position", str(source), "--rubric", "pairwise", "-o", str(out),
                 *model_args(cache))  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(out.read_text("utf-8"))
    assert report["probe"] == "position" and report["judge"] == MODEL
    assert report["pairs"] == 1 and report["judge_calls"] == 2  # both orders
    assert report["complete_pairs"] + report["unparsed_pairs"] == 1
    (record,) = read_jsonl(tmp_path / "position.records.jsonl")
    check_records([record], ["p1"], "pairwise")


def test_batch_export_then_import(tmp_path: Path, cache: Path) -> None:
    """The exported bodies are what a real server takes; their replies, imported, are
    records like the online ones (same rubric, output mode and provenance)."""
    source = write_jsonl(tmp_path / "cases.jsonl", short_cases(2))
    requests = tmp_path / "requests.jsonl"
    done = judge("grade", str(source), "--rubric", "relevance", "--export-batch",
                 str(requests), *model_args(cache))  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = []
    for line in read_jsonl(requests):
        request = urllib.request.Request(
            server_url() + "/chat/completions",
            data=json.dumps(line["body"]).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            body = json.loads(answer.read())
        response = {"status_code": 200, "request_id": body.get("id", ""), "body": body}
        results.append({"id": f"r-{line['custom_id']}", "custom_id": line["custom_id"],
                        "response": response, "error": None})  # fmt: skip
    out = tmp_path / "imported.jsonl"
    done = judge("grade", str(source), "--rubric", "relevance", "-o", str(out), "--import-batch",
                 str(write_jsonl(tmp_path / "results.jsonl", results)),
                 *grade_args(cache))  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    check_records(read_jsonl(out), ["c0", "c1"], "relevance", online=False)


def test_judge_serve_grades_and_runs_a_job(tmp_path: Path, cache: Path) -> None:
    local = {"model": MODEL, "base_url": server_url(), "max_tokens": 96,
             "timeout": TIMEOUT, "concurrency": 2}  # fmt: skip
    config = write_config(tmp_path / "service.yaml", token="t-llamacpp",
                          data_dir=str(tmp_path / "data"), cache_dir=str(cache),
                          judges={"local": local},
                          limits={"request_timeout_s": TIMEOUT})  # fmt: skip
    service = ServiceProcess(config).start()
    try:
        headers = {"Authorization": "Bearer t-llamacpp"}
        with httpx.Client(base_url=service.base_url, headers=headers, timeout=TIMEOUT) as api:
            cases = short_cases(2)
            answer = api.post("/v1/grade", json={"rubric": "relevance", "cases": cases[:1]})
            assert answer.status_code == 200, answer.text
            (record,) = answer.json()["records"]
            check_records([record], ["c0"], "relevance")
            job = api.post("/v1/jobs", json={"rubric": "relevance", "cases": cases})
            assert job.status_code == 202, job.text
            state = wait_for_job(api, job.json()["id"], timeout=TIMEOUT)
            assert state["status"] == "done", state
            assert state["progress"] == {"done": 2, "total": 2}
            lines = api.get(f"/v1/jobs/{job.json()['id']}/records").text.splitlines()
            check_records([json.loads(x) for x in lines], ["c0", "c1"], "relevance")
    finally:
        service.stop()


def test_resume_after_kill_9(tmp_path: Path) -> None:
    """Killed once a record is written, the rerun keeps its verdicts and grades only the
    rest (a failed case is asked again: failures are never final)."""
    cases = short_cases(4)
    source = write_jsonl(tmp_path / "cases.jsonl", cases)
    out = tmp_path / "out.jsonl"
    args = ["grade", str(source), "--rubric", "relevance", "-o", str(out), "--model", MODEL,
            "--base-url", server_url(), "--max-tokens", "64", "--concurrency", "1",
            "--timeout", f"{TIMEOUT:g}", "--no-cache", "--max-error-rate", "1"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    process = subprocess.Popen([sys.executable, "-m", "judge.cli", *args], cwd=REPO, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + TIMEOUT  # only stops a broken run from hanging
    while not (out.exists() and out.read_bytes().count(b"\n") >= 1):
        assert process.poll() is None and time.monotonic() < deadline, "no record written"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    kept = read_jsonl(out)
    assert 1 <= len(kept) < 4
    done = judge(*args)
    assert done.returncode in (0, 1), done.stderr
    records = read_jsonl(out)
    assert [r["id"] for r in records] == ["c0", "c1", "c2", "c3"]
    final = [r for r in kept if r["status"] in ("ok", "abstained")]
    by_id = {r["id"]: r for r in records}
    assert all(by_id[r["id"]] == r for r in final)  # kept as they were, not graded again
    assert sent(done.stderr) <= 2 * (4 - len(final))


def test_calibrate_on_the_real_records(relevance_run: dict[str, Any], tmp_path: Path) -> None:
    records = read_jsonl(relevance_run["out"])
    humans = tmp_path / "humans.csv"
    # people's labels share the judge's values (its own, or 4 where nothing parsed): what
    # calibrate does with them is the contract here, not how well a 135M model agrees
    given = {r["id"]: r["label"] if r["status"] == "ok" and r["label"] else "4" for r in records}
    humans.write_text("id,label\n" + "".join(f"{i},{v}\n" for i, v in given.items()), "utf-8")
    report = tmp_path / "report"
    done = judge("calibrate", str(relevance_run["out"]), str(humans), "-o", str(report))
    # parse errors are left out (counted); an abstention is a verdict, compared as its label
    decided = [r for r in records if r["status"] in ("ok", "abstained")]
    if not any(r["status"] == "ok" for r in records):  # no label of the judge's to share
        assert done.returncode in (0, 2) and (done.returncode == 0 or done.stderr.strip()), done
        return
    assert done.returncode == 0, done.stderr
    result = json.loads((report / "calibration.json").read_text("utf-8"))
    assert result["n"] == len(decided)
    assert result["unmatched"]["judge_only"] == result["unmatched"]["human_only"] == 0
    assert result["readiness"] in ("not_ready", "rough_signal", "gate_ready")
    assert (report / "report.md").is_file()
