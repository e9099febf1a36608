"""Issue 35 point 5: the records (and what `judge grade` prints and writes beside them) stay
byte-identical through the move of the orchestration out of `judge/cli/`, apart from
`latency_ms`. The goldens under tests/data/records_golden/ were written by the code BEFORE
that refactor (`JUDGE_WRITE_GOLDENS=1 python -m pytest tests/e2e/test_records_unchanged.py`
rewrites them; do that only for a change that means to alter the records).

Four runs: the bundled examples on the offline rules judge (the README's first command, and
the RAG set on four rubrics at once); a jury of three planted jurors on loopback servers; a
batch-file round trip (`--export-batch`, results answered from the request file,
`--import-batch`); and `--engine ray` on a local cluster. What is normalised: every
`latency_ms` (set to 0), the loopback servers' base URLs (`<URL:name>`) and so the
`judge_id`s of judges on them (a hash of the judge's URL among the rest: numbered in order of
appearance), Ray's own log lines on stderr (timestamps, session folders), and every run runs
in its own folder with relative paths, so no temporary path reaches the output."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.testing import FakeOpenAIServer
from judge.testing.jurors import plant_panel, planted_truth, write_cases
from tests.helpers import FAITHFUL_VERDICT, REPO, case, write_jsonl

GOLDEN = REPO / "tests" / "data" / "records_golden"
WRITE = os.environ.get("JUDGE_WRITE_GOLDENS") == "1"
MODEL = "judge-test-2024-01-01"
Make = Callable[..., FakeOpenAIServer]
RAY_LOG = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\s|\[\d{4}-\d\d-\d\d |\(\w+ pid=)")


def zero_latency(value: Any) -> Any:
    """Every latency_ms set to 0; a record's graded_at (a clock reading, issue 51) and a
    null case_time (these cases carry no time) left out, so the goldens hold as written."""
    if isinstance(value, dict):
        if "graded_at" in value and "rubric_sha256" in value:
            value = {k: v for k, v in value.items() if k != "graded_at"}
            if value.get("case_time", 0) is None:
                del value["case_time"]
        return {k: (0 if k == "latency_ms" else zero_latency(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [zero_latency(v) for v in value]
    return value


def normalise(text: str, urls: dict[str, str]) -> str:
    for name, url in urls.items():
        text = text.replace(url, f"<URL:{name}>")
    if any(
        url.startswith("http") for url in urls.values()
    ):  # a loopback server's URL (its port) is part of the judge's identity
        ids = dict.fromkeys(re.findall(r'"judge_id": "([0-9a-f]{16})"', text))
        for n, judge_id in enumerate(ids):
            text = text.replace(judge_id, f"<judge_id:{n}>")
    return text


def without_ray_logs(err: str) -> str:
    """stderr less Ray's own log lines (timestamped, its session folder named)."""
    lines = err.splitlines(keepends=True)
    return "".join(line for line in lines if not RAY_LOG.match(line))


def snapshot(folder: Path, code: int, out: str, err: str, urls: dict[str, str]) -> str:
    """One text of everything a run left: its exit code, stdout, stderr and every file it
    wrote (JSONL and JSON re-serialised with latency_ms zeroed), in path order."""
    parts = [f"== exit {code}", "== stdout", out, "== stderr", err]
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(("cache/", "inputs/")):
            continue
        text = path.read_text("utf-8")
        if path.suffix == ".jsonl":
            rows = [zero_latency(json.loads(line)) for line in text.splitlines() if line]
            text = "\n".join(json.dumps(r, sort_keys=True) for r in rows)
        elif path.suffix == ".json":
            text = json.dumps(zero_latency(json.loads(text)), indent=1, sort_keys=True)
        parts += [f"== file {rel}", text]
    return normalise("\n".join(parts) + "\n", urls)


def check(name: str, text: str) -> None:
    golden = GOLDEN / f"{name}.txt"
    if WRITE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, "utf-8")
    assert golden.exists(), f"no golden {golden}: run with JUDGE_WRITE_GOLDENS=1 on the old code"
    expected = golden.read_text("utf-8")
    assert text == expected, f"{name}: the run's output differs from {golden}"


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("COLUMNS", "120")
    yield folder


def run(
    capsys: pytest.CaptureFixture[str], argv: list[str], env: dict[str, str]
) -> tuple[int, str, str]:
    code = main(argv, env={"XDG_CACHE_HOME": "cache", **env})
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_examples_on_the_offline_judge(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = str(REPO / "examples" / "cases.jsonl")
    argv = ["grade", cases, "--rubric", "faithfulness", "-o", "graded.jsonl"]
    code, out, err = run(capsys, [*argv, "--summary", "summary.json"], {})
    check("examples_offline", snapshot(run_dir, code, out, err, {str(REPO): "<REPO>"}))


def test_the_rag_examples_on_four_rubrics(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = str(REPO / "examples" / "rag" / "cases.jsonl")
    rubrics = "retrieval,context_relevance,faithfulness,correctness"
    argv = ["grade", cases, "--rubric", rubrics, "-o", "runs/", "--summary", "summary.json"]
    code, out, err = run(capsys, argv, {})
    check("rag_four_rubrics", snapshot(run_dir, code, out, err, {str(REPO): "<REPO>"}))


def test_a_jury_run(
    run_dir: Path, capsys: pytest.CaptureFixture[str], server_factory: Make
) -> None:
    labels = ["compliant", "minor_issue", "violation"]
    truth = planted_truth(24, seed=7, id_format="c{:03d}", labels=labels)
    jurors = plant_panel(
        truth, labels, error_rates=[0.2, 0.25, 0.15], shared=[0, 1],
        malformed_rate=[0, 0, 0.1], seed=1,
    )  # fmt: skip
    servers = {
        name: server_factory(responder=juror, model=f"juror-{name}-2024-01-01")
        for name, juror in zip("abc", jurors, strict=True)
    }
    specs = [
        {"name": n, "model": s.model, "base_url": s.base_url, "api_key_env": "JUROR_KEY",
         "concurrency": 4, "sampling": {"temperature": 0, "seed": 1}}
        for n, s in servers.items()
    ]  # fmt: skip
    inputs = run_dir / "inputs"
    inputs.mkdir()
    (inputs / "jury.yaml").write_text(yaml.safe_dump({"jurors": specs}), "utf-8")
    write_cases(inputs / "cases.jsonl", truth)
    rubrics = str(REPO / "examples" / "rubrics")
    argv = ["grade", "inputs/cases.jsonl", "--rubric", "policy", "--rubrics-dir", rubrics]
    argv += ["--jury", "inputs/jury.yaml", "-o", "graded/", "--summary", "graded/summary.json"]
    code, out, err = run(capsys, [*argv, "--max-error-rate", "1"], {"JUROR_KEY": "sk-test"})
    urls = {str(REPO): "<REPO>", **{n: s.base_url for n, s in servers.items()}}
    check("jury", snapshot(run_dir, code, out, err, urls))


def answered(requests: Path) -> list[dict[str, Any]]:
    """A results line for every request, in the request file's order: a faithful verdict
    for even lines, one claim unsupported for odd ones."""
    lines = []
    for n, line in enumerate(requests.read_text("utf-8").splitlines()):
        custom_id = json.loads(line)["custom_id"]
        verdict = json.loads(json.dumps(FAITHFUL_VERDICT))
        if n % 2:
            verdict["claims"][1]["verdict"] = "not_enough_information"
        message = {"role": "assistant", "content": json.dumps(verdict), "refusal": None}
        body = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1, "model": MODEL,
            "system_fingerprint": "fp_b",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }  # fmt: skip
        response = {"status_code": 200, "request_id": f"req_{n}", "body": body}
        lines.append({"id": f"b{n}", "custom_id": custom_id, "response": response})
    return lines


def test_a_batch_file_round_trip(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = run_dir / "inputs"
    inputs.mkdir()
    write_jsonl(
        inputs / "cases.jsonl",
        [case(f"c{n}", question=f"How long is trial {n}?") for n in range(6)],
    )
    base = ["grade", "inputs/cases.jsonl", "--rubric", "faithfulness", "--model", MODEL]
    env = {"OPENAI_API_KEY": "sk-test"}
    exported = run(capsys, [*base, "--export-batch", "requests.jsonl"], env)
    write_jsonl(run_dir / "results.jsonl", answered(run_dir / "requests.jsonl"))
    imported = run(
        capsys,
        [
            *base,
            "--import-batch",
            "results.jsonl",
            "-o",
            "graded.jsonl",
            "--summary",
            "summary.json",
        ],
        env,
    )
    parts = ["== export", *map(str, exported), "== import", *map(str, imported)]
    check("batch_round_trip", "\n".join(parts) + "\n" + snapshot(run_dir, 0, "", "", {}))


@pytest.mark.slow  # a Ray cluster: seconds to start (.ci/slow runs it)
def test_a_ray_run(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        inputs = run_dir / "inputs"
        inputs.mkdir()
        wrong = {"answer": "The trial lasts 40 days."}  # distinct cases: no cache hit to race
        wrong = {"answer": "The trial lasts 40 days."}  # distinct cases: no cache hit to race
        rows = [
            case(f"c{n:03d}", question=f"How long is trial {n}?", **({} if n % 2 else wrong))
            for n in range(40)
        ]
        write_jsonl(inputs / "cases.jsonl", rows)
        with FakeOpenAIServer() as server:
            env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test",
                   "JUDGE_MODEL": MODEL}  # fmt: skip
            argv = ["grade", "inputs/cases.jsonl", "--rubric", "faithfulness", "--engine", "ray"]
            code, out, err = run(
                capsys, [*argv, "-o", "graded.jsonl", "--summary", "summary.json"], env
            )
            urls = {"server": server.base_url}
        check("ray", snapshot(run_dir, code, out, without_ray_logs(err), urls))
    finally:
        ray.shutdown()
