"""Conversations on the batch paths, against the loopback test server: the Batch API gives
the online records (one request a conversation, every turn's verdict kept), and Ray
(`--engine ray`, slow) gives them too, in input order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.testing import FakeOpenAIServer
from tests.conversation_judges_support import conversation, conversation_pair, with_reply
from tests.helpers import read_jsonl, write_jsonl

MODEL = "judge-test-2024-01-01"


def env_for(server: FakeOpenAIServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "JUDGE_MODEL": MODEL,
        "JUDGE_BATCH_POLL": "0.02",
        "JUDGE_BATCH_MAX_WAIT": "30",
    }


def contract(path: Path) -> list[tuple[Any, ...]]:
    """What must not differ between the online and the batch paths."""
    return [
        (r["id"], r["status"], r["label"], r["score"], json.dumps(r["verdict"]), r["judge"])
        for r in read_jsonl(path)
    ]


def rows_for(rubric: str) -> list[dict[str, Any]]:
    if rubric == "conversation_pairwise":
        return [conversation_pair("p1"), conversation_pair("p2")]
    return [conversation("c1"), with_reply(conversation("c2"), 6, "Bananas are yellow.")]


@pytest.mark.parametrize("rubric", ["turn_relevancy", "conversation_pairwise"])
def test_batch_api_records_equal_the_online_records(
    server_factory: Any, tmp_path: Path, rubric: str
) -> None:
    server = server_factory()
    env = env_for(server)
    source = write_jsonl(tmp_path / "in.jsonl", rows_for(rubric))
    online, batch = tmp_path / "online.jsonl", tmp_path / "batch.jsonl"
    args = ["grade", str(source), "--rubric", rubric, "--no-cache"]
    assert main([*args, "-o", str(online)], env) == 0
    assert main([*args, "-o", str(batch), "--batch-api"], env) == 0
    assert server.stats.requests_by_path["/v1/batches"] == 1
    assert contract(batch) == contract(online)
    assert {r["status"] for r in read_jsonl(batch)} == {"ok"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray  # the dev extra has it; imported here so the default tests never start it

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.mark.slow  # a Ray cluster: seconds to start
def test_ray_records_equal_the_local_records(
    local_ray: None, openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = [
        with_reply(conversation(f"c{n:03d}"), 6, "Bananas are yellow.")
        if n % 2
        else conversation(f"c{n:03d}")
        for n in range(40)
    ]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    env = env_for(openai_server)
    args = ["grade", str(source), "--rubric", "turn_relevancy", "--no-cache"]
    assert main([*args, "-o", str(tmp_path / "local.jsonl")], env) == 0
    ray_args = ["-o", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--ray-actors", "2"]
    assert main([*args, *ray_args], env) == 0
    ours = read_jsonl(tmp_path / "ray.jsonl")
    assert [r["id"] for r in ours] == [r["id"] for r in rows]
    assert contract(tmp_path / "ray.jsonl") == contract(tmp_path / "local.jsonl")
    assert {r["score"] for r in ours} == {1.0, 0.5}
