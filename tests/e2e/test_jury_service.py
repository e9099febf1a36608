"""A jury as a named judge of `judge serve` (`judges: {panel: {jury: jury.yaml}}`), through
the loopback test server's simulated jurors: `/v1/grade` and a job grade each case with
every juror (one request per juror per case; none again from the cache), every record
lists every vote, the malformed juror's cases read `votes: 2 of 3`, and the records are
the ones `judge grade --jury` writes for the same cases. A jury the service cannot serve
(`mode: cyclic`), a missing juror key and a `juries:` key are refused at start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from judge.cli import main
from judge.errors import UsageError
from judge.service.config import load_service_config
from judge.testing.jurors import plant_panel, planted_truth, write_cases
from tests.e2e.test_jury import LABELS, RUBRICS, start_jurors, write_jury
from tests.helpers import read_jsonl
from tests.test_service_support import InProcessService, wait_for_job

# a jury served by judge serve, juror servers behind it (.ci/slow runs it)
pytestmark = pytest.mark.slow

N = 20
NAMES = ["a", "b", "c"]
ENV = {"JUROR_KEY": "sk-test"}


def service_config(tmp_path: Path, jury: Path) -> Path:
    path = tmp_path / "service.yaml"
    config = {
        "judges": {"panel": {"jury": jury.name}, "rules": {}},
        "default_judge": "panel",
        "data_dir": str(tmp_path / "data"),
        "cache_dir": str(tmp_path / "service-cache"),
        "rubrics_dirs": [str(RUBRICS)],
    }
    path.write_text(yaml.safe_dump(config), "utf-8")
    return path


def votes(record: dict[str, Any]) -> tuple[Any, ...]:
    panel = record["panel"]
    jurors = [(v["juror"], v["status"], v["label"]) for v in panel["jurors"]]
    return (record["id"], record["status"], record["label"], panel["votes"], jurors)


def test_a_jury_served_as_a_named_judge(tmp_path: Path, server_factory: Any) -> None:
    truth = planted_truth(N, id_format="c{:03d}")
    planted = plant_panel(
        truth, LABELS, error_rates=[0.2, 0.25, 0.15], shared=[0, 1], malformed_rate=[0, 0, 0.1]
    )
    servers = start_jurors(server_factory, planted, NAMES)
    jury = write_jury(tmp_path / "jury.yaml", servers)
    cases_path = write_cases(tmp_path / "cases.jsonl", truth)
    cases = read_jsonl(cases_path)
    config = load_service_config(service_config(tmp_path, jury), ENV)
    assert "sk-test" in config.secrets()  # the jurors' key is redacted from what it says
    with InProcessService(config) as service, httpx.Client(base_url=service.base_url) as api:
        listed = {j["name"]: j for j in api.get("/v1/judges").json()}
        assert listed["panel"]["model"] == "jury" and listed["panel"]["default"] is True
        response = api.post("/v1/grade", json={"rubric": "policy", "cases": cases[:10]})
        assert response.status_code == 200, response.text
        bad = len({c["id"] for c in cases[:10]} & planted[2].malformed)
        asked = {n: s.stats.requests for n, s in servers.items()}
        assert asked == {"a": 10, "b": 10, "c": 10 + bad}  # one a juror a case (c: a repair)
        graded = response.json()["records"]
        assert all(len(r["panel"]["jurors"]) == 3 for r in graded)

        created = api.post("/v1/jobs", json={"rubric": "policy", "cases": cases})
        assert created.status_code == 202, created.text
        state = wait_for_job(api, created.json()["id"])
        assert state["status"] == "done", state
        job = api.get(f"/v1/jobs/{created.json()['id']}/records")
        records = [json.loads(line) for line in job.text.splitlines()]
    # the first 10 came from the cache: each juror was asked the other 10 only
    assert servers["a"].stats.requests == N and servers["b"].stats.requests == N
    malformed = [r for r in records if r["id"] in planted[2].malformed]
    assert malformed and {r["panel"]["votes"] for r in malformed} == {"2 of 3"}
    assert [votes(r) for r in records[:10]] == [votes(r) for r in graded]

    # the same panel records as `judge grade --jury` on the same cases
    out = tmp_path / "out"
    args = ["grade", str(cases_path), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--jury", str(jury), "-o", str(out), "--max-error-rate", "1"]
    assert main(args, env={**ENV, "XDG_CACHE_HOME": str(tmp_path / "cli-cache")}) == 0
    assert [votes(r) for r in read_jsonl(out / "policy.jsonl")] == [votes(r) for r in records]
    assert records[0]["judge_id"] == read_jsonl(out / "policy.jsonl")[0]["judge_id"]


def test_what_the_service_refuses_at_start(tmp_path: Path, server_factory: Any) -> None:
    servers = {n: server_factory(model=f"juror-{n}-2024-01-01") for n in NAMES}
    cyclic = write_jury(tmp_path / "jury.yaml", servers, mode="cyclic")
    with pytest.raises(UsageError, match="serves a jury of mode: full, not mode: cyclic"):
        load_service_config(service_config(tmp_path, cyclic), ENV)
    full = write_jury(tmp_path / "jury.yaml", servers)
    with pytest.raises(UsageError, match=r"juror 'a': \$JUROR_KEY is not set"):
        load_service_config(service_config(tmp_path, full), {})
    config = tmp_path / "juries.yaml"
    config.write_text("juries: {panel: {jury: j.yaml}}\n", "utf-8")
    with pytest.raises(UsageError, match="name a jury as a judge") as caught:
        load_service_config(config, {})
    assert str(config) in str(caught.value)
