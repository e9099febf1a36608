"""The client benchmark's parts (issue 22), checked for behaviour, never for speed: the
minimal fixed-latency server answers a verdict the project grades, keeps the run's window,
and the table's arithmetic is the one benchmarks/CLIENT.md states."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchmarks import client as bench
from benchmarks.minimal_server import benchmark_verdict, completion_bytes
from benchmarks.server import ServerProcess
from judge.engine.parse import parse_verdict
from judge.rubric import load_rubric

# the client benchmark's rows, each against its own server (.ci/slow runs it)
pytestmark = pytest.mark.slow

MINIMAL = "benchmarks.minimal_server"


def post_chat(base_url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
        return dict(json.loads(response.read()))


def test_the_precomputed_reply_is_a_valid_faithfulness_verdict() -> None:
    rubric = load_rubric("faithfulness")
    verdict = parse_verdict(benchmark_verdict(), rubric.verdict_model())
    assert rubric.behaviour.score(rubric, verdict).status == "ok"
    raw = completion_bytes(benchmark_verdict())
    head, body = raw.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK") and f"Content-Length: {len(body)}".encode() in head
    data = json.loads(body)
    assert data["choices"][0]["message"]["content"] == benchmark_verdict()


def test_the_minimal_server_answers_chat_requests_and_keeps_the_window() -> None:
    with ServerProcess(latency=0.01, module=MINIMAL) as server:
        assert server.reset() == {"requests": 0, "first": None, "last": None}
        for _ in range(3):  # one connection each, the body skipped by its Content-Length
            reply = post_chat(server.base_url, {"model": "m", "messages": [], "pad": "x" * 5000})
        assert reply["object"] == "chat.completion"
        assert reply["choices"][0]["message"]["content"] == benchmark_verdict()  # type: ignore[index]
        window = server.stats()
        assert window["requests"] == 3
        assert window["last"] - window["first"] >= 0.01  # at least one latency apart
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.base_url + "/nothing", timeout=30)
        assert refused.value.code == 404


def test_efficiency_and_cpu_per_case_arithmetic() -> None:
    # 8 cases, 2 at a time, 0.5 s each: ideal 2 s; done in 2.5 s with 0.004 s of CPU
    cell = bench.Cell(wall=2.5, cpu=0.004, done=8)
    assert cell.efficiency(0.5, 2, 8) == pytest.approx(0.8)
    assert cell.cpu_ms(8) == pytest.approx(0.5)
    assert cell.text(0.5, 2, 8) == "0.80, 0.50 ms"
    assert bench.Cell(wall=4.0, cpu=0.004, done=6).text(0.5, 2, 8) == "0.50 (6/8 done), 0.50 ms"


@pytest.mark.parametrize("kind", ["minimal", "test"])
def test_a_tiny_row_runs_every_client_to_the_end(tmp_path: Path, kind: str) -> None:
    row = bench.run_row(tmp_path, 0.01, 4, 8, server_cpu=-1, kind=kind)
    assert list(row) == list(bench.COLUMNS)
    for cell in row.values():
        assert cell.done == 8
        # two rounds of the latency at least (the server's window, or the whole run)
        assert cell.wall >= 0.02 and cell.cpu > 0
    records = (tmp_path / "records.jsonl").read_text().splitlines()
    assert [json.loads(line)["status"] for line in records] == ["ok"] * 8
