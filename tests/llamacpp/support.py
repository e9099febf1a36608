"""What the llama.cpp tests share: the server's address, the judge CLI as a subprocess
against it, and small cases (short prompts: a 135M model on a CPU reads ~50-500 tokens a
second). Assertions are on the contract (statuses, output modes, counts, provenance),
never on what the tiny model thinks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
URL_ENV = "JUDGE_TEST_LLAMACPP_URL"
MODEL, OTHER_MODEL = "smollm2-a", "smollm2-b"  # two aliases of one model (.ci/llamacpp_server.py)
STATUSES = {"ok", "parse_error", "abstained"}  # what a reachable server's case may end as
TIMEOUT = 600.0  # --timeout: a loaded CI machine is slow; streamed replies bound silence only


def server_url() -> str:
    url = os.environ.get(URL_ENV)
    if not url:
        pytest.fail(f"${URL_ENV} is not set: run .ci/llamacpp (it starts the server)")
    return url


def judge(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`python -m judge.cli ARGS` with no OPENAI_/JUDGE_ variables of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    command = [sys.executable, "-m", "judge.cli", *args]
    return subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def model_args(cache: Path, *, max_tokens: int = 96, concurrency: int = 4) -> list[str]:
    """The judge options of every run: the local model, small replies, the shared cache."""
    return [
        "--model", MODEL, "--base-url", server_url(), "--max-tokens", str(max_tokens),
        "--concurrency", str(concurrency), "--timeout", f"{TIMEOUT:g}",
        "--cache-dir", str(cache),
    ]  # fmt: skip


def grade_args(cache: Path, **options: int) -> list[str]:
    """`model_args` and `--max-error-rate 1`: the tiny model's parse errors fail no run."""
    return [*model_args(cache, **options), "--max-error-rate", "1"]


def sent(stderr: str) -> int:
    """Requests sent, from the line `requests: N sent, ...`."""
    found = re.search(r"requests: (\d+) sent", stderr)
    assert found, stderr
    return int(found.group(1))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def check_records(
    records: list[dict[str, Any]], ids: list[str], rubric: str, *, online: bool = True
) -> None:
    """The contract of a record from the real server, whatever the model said (`online`:
    sent by this run, so it has a latency; an imported batch result has none)."""
    assert [r["id"] for r in records] == ids  # one each, input order
    for record in records:
        assert record["rubric"] == rubric and record["rubric_sha256"]
        assert record["status"] in STATUSES, record
        judge_ = record["judge"]
        assert judge_["model"] == MODEL and judge_["output_mode"] == "json_schema", judge_
        assert judge_["system_fingerprint"], judge_  # llama.cpp names its build
        if not record["cached"]:
            assert record["usage"]["prompt_tokens"] > 0
            assert record["latency_ms"] > 0 or not online
            assert record["usage"]["completion_tokens"] <= judge_["max_tokens"]
        if record["status"] == "parse_error":
            assert record["error"] and record["raw"] is not None and record["score"] is None
        if record["status"] == "ok":
            assert 0.0 <= record["score"] <= 1.0 and record["verdict"] is not None


# Short cases: a question, one or two contexts, a one-line answer.
def short_cases(n: int, **extra: Any) -> list[dict[str, Any]]:
    facts = [
        ("When are invoices sent?", "Invoices are sent on the first day of each month.",
         "On the first day of each month."),
        ("How long is the return window?", "Returns are accepted within 30 days.",
         "You have 30 days."),
        ("Is shipping free?", "Shipping is free on orders over $50.",
         "Yes, on orders over $50."),
        ("Can I pay by card?", "We accept card and bank transfer.", "Yes, by card."),
        ("Where is the warehouse?", "Our warehouse is in Reno.", "It is in Reno."),
        ("How fast is a refund?", "Refunds take 5 business days.", "About 5 business days."),
    ]  # fmt: skip
    return [
        {"id": f"c{i}", "question": q, "contexts": [c], "answer": a, **extra}
        for i, (q, c, a) in enumerate(facts[:n])
    ]
