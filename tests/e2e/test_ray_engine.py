"""`judge grade --engine ray` and `judge.engines.ray.grade_dataset` on a local Ray cluster
(2 CPUs, 2 actors) against the loopback test server: the same records as `judge grade`, in
input order; a killed actor's batches retried by Ray, none lost or duplicated; a rerun that
sends nothing. One cluster for the module (starting Ray costs seconds)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

# ray[data] is in the dev extra: without it this module fails to import, it is never skipped
import ray

from judge.cli import main
from judge.config import JudgeConfig
from judge.testing import FakeOpenAIServer, Reply
from tests.helpers import REPO, case, read_jsonl, write_jsonl

MODEL = "judge-test-2024-01-01"
CASES = 2000
KILL_CASES = 640  # ten batches of 64: the kill lands in the middle of the run


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def env_for(server: FakeOpenAIServer) -> dict[str, str]:
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "JUDGE_MODEL": MODEL}


def cases(count: int) -> list[dict[str, Any]]:
    # half faithful, half with a made-up claim: ok records with different scores
    return [
        case(f"c{n:05d}", **({} if n % 2 else {"answer": "The trial lasts 40 days."}))
        for n in range(count)
    ]


def requests(server: FakeOpenAIServer) -> int:
    return int(server.stats_dict()["requests"])


def grade(server: FakeOpenAIServer, source: Path, out: Path, *extra: str) -> int:
    args = ["grade", str(source), "--rubric", "faithfulness", "-o", str(out), "--no-cache"]
    return main([*args, *extra], env=env_for(server))


def without_latency(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("latency_ms", "graded_at")} for r in records]


def test_importing_judge_and_grading_locally_import_no_ray(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", cases(3))
    script = (
        "import sys\n"
        "from judge.cli import main\n"
        f"code = main(['grade', {str(source)!r}, '--rubric', 'faithfulness', '--offline',"
        f" '-o', {str(tmp_path / 'out.jsonl')!r}])\n"
        "assert code == 0, code\n"
        "loaded = sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow  # a Ray cluster: seconds to start, seconds a dataset
def test_ray_records_equal_judge_grade_s_in_input_order_and_a_rerun_sends_nothing(
    local_ray: None, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = cases(CASES)
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    assert grade(server, source, local) == 0
    before = requests(server)
    summary_path = tmp_path / "summary.json"
    code = grade(
        server,
        source,
        on_ray,
        "--engine",
        "ray",
        "--ray-actors",
        "2",
        "--summary",
        str(summary_path),
    )
    assert code == 0
    assert requests(server) - before == CASES
    ours, theirs = read_jsonl(on_ray), read_jsonl(local)
    assert [r["id"] for r in ours] == [r["id"] for r in rows]
    assert without_latency(ours) == without_latency(theirs)
    assert {r["status"] for r in ours} == {"ok"} and len({r["score"] for r in ours}) == 2
    summary = json.loads(summary_path.read_text("utf-8"))
    assert summary["cases"] == CASES and summary["run"]["sent"] == CASES

    before = requests(server)
    assert grade(server, source, on_ray, "--engine", "ray", "--summary", str(summary_path)) == 0
    assert requests(server) == before  # a rerun: every record kept, nothing sent
    rerun = json.loads(summary_path.read_text("utf-8"))["run"]
    assert (rerun["kept"], rerun["graded"], rerun["sent"]) == (CASES, 0, 0)
    assert read_jsonl(on_ray) == ours


@pytest.mark.slow  # a Ray cluster: seconds to start, seconds a dataset
def test_a_rerun_grades_only_what_is_missing_or_failed(
    local_ray: None, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = cases(40)
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "ray.jsonl"
    assert grade(server, source, out, "--engine", "ray", "--limit", "10") == 0
    records = read_jsonl(out)
    records[3] = {**records[3], "status": "api_error", "verdict": None, "score": None}
    write_jsonl(out, records)
    before = requests(server)
    assert grade(server, source, out, "--engine", "ray") == 0
    assert requests(server) - before == 31  # 30 never graded and the failed one
    assert [r["id"] for r in read_jsonl(out)] == [r["id"] for r in rows]


class KillOnce:
    """A fault hook: the actor that has just graded the batch holding `victim` (its
    requests sent, its records not yet returned) kills its own process with SIGKILL, once
    (a marker file says it happened, and how many records the lost batch held)."""

    def __init__(self, victim: str, marker: Path) -> None:
        self.victim, self.marker = victim, marker

    def __call__(self, batch: Sequence[Any]) -> None:
        if any(c.id == self.victim for c in batch):
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, str(len(batch)).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.slow  # a Ray cluster: seconds to start, seconds a dataset
def test_a_killed_actor_s_cases_are_retried_none_lost_or_duplicated(
    local_ray: None, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    from judge.engines.ray import grade_dataset, records_of

    source = write_jsonl(tmp_path / "in.jsonl", cases(KILL_CASES))
    marker = tmp_path / "killed"
    ds = ray.data.read_json(str(source))
    config = JudgeConfig(model=MODEL, base_url=server.base_url, api_key="sk-test", use_cache=False)
    before = requests(server)
    hook = KillOnce(f"c{KILL_CASES // 2:05d}", marker)
    graded = grade_dataset(ds, "faithfulness", config, actors=2, after_batch=hook)
    ids = [record.id for record in records_of(graded)]
    assert marker.exists(), "the fault hook never killed an actor"
    assert len(ids) == KILL_CASES and set(ids) == {f"c{n:05d}" for n in range(KILL_CASES)}
    lost = int(marker.read_text())  # graded, then lost with the actor: Ray ran them again
    assert lost > 0 and requests(server) - before == KILL_CASES + lost


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ray-actors", "2"], "--ray-actors needs --engine ray"),
        (["--engine", "ray", "--ray-actors", "0"], "--ray-actors must be at least 1"),
        (["--engine", "ray", "--batch-api"], "pick one"),
        (["--engine", "ray", "--jury", "jury.yaml"], "--jury runs locally"),
    ],
)
def test_what_the_ray_engine_does_not_do_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", cases(2))
    code = main(["grade", str(source), "--rubric", "faithfulness", "--offline", *extra])
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # a Ray cluster: seconds to start, seconds a dataset
def test_a_fatal_judge_error_in_an_actor_stops_the_run_as_judge_grade_does(
    local_ray: None, server_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", cases(8))
    said = {}
    for engine in ("local", "ray"):
        bad_key = server_factory()
        for _ in range(40):
            bad_key.script(Reply(status=401, error_body={"error": {"message": "bad key"}}))
        out = tmp_path / f"{engine}.jsonl"
        assert grade(bad_key, source, out, "--engine", engine) == 1
        errors = [
            line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")
        ]
        said[engine] = [line.replace(bad_key.base_url, "URL") for line in errors]
    assert said["ray"] == said["local"] and "HTTP 401" in said["ray"][0]


@pytest.mark.slow  # a Ray cluster: seconds to start, seconds a dataset
def test_parquet_in_and_out_give_the_records_of_the_jsonl_run(
    local_ray: None, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = cases(30)
    jsonl = write_jsonl(tmp_path / "in.jsonl", rows)
    table = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), table)
    from_jsonl, from_parquet = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    copy = tmp_path / "b.parquet"
    assert grade(server, jsonl, from_jsonl, "--engine", "ray") == 0
    assert grade(server, table, from_parquet, "--engine", "ray", "--parquet", str(copy)) == 0
    ours = read_jsonl(from_parquet)
    assert without_latency(ours) == without_latency(read_jsonl(from_jsonl))
    assert pq.read_table(copy).column("id").to_pylist() == [r["id"] for r in rows]


@pytest.mark.slow  # a Ray cluster: seconds to start, seconds a dataset
def test_a_dataset_row_that_is_not_a_case_is_an_input_error_naming_its_id(
    local_ray: None, server: FakeOpenAIServer
) -> None:
    from judge.engines.ray import grade_dataset, records_of
    from judge.errors import InputError

    rows = [case("fine"), {"id": "no-answer", "question": "q?", "contexts": ["c"]}]
    config = JudgeConfig(model=MODEL, base_url=server.base_url, api_key="sk-test", use_cache=False)
    graded = grade_dataset(ray.data.from_items(rows), "faithfulness", config, actors=1)
    with pytest.raises(InputError, match="no-answer.*answer"):
        list(records_of(graded))
