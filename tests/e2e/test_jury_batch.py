"""Batch files with a jury through the loopback test server: `--export-batch DIR --jury J`
writes one request file per juror (its share in `mode: cyclic`) and sends nothing;
`--import-batch RESULTS/ --jury J` writes every juror's records and the panel's, the same
panel records as a live run's on the same replies (the malformed juror's cases `votes: 2
of 3` in both), and sends nothing either. `mode: escalate`, a pairwise rubric, a juror
without results and a results file of no juror are refused with exit 2 and one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.cli import main
from judge.testing.jurors import plant_panel, planted_truth, write_cases
from tests.e2e.test_jury import LABELS, RUBRICS, start_jurors, write_jury
from tests.helpers import read_jsonl

# batch export and import for a jury: minutes; run by .ci/slow
pytestmark = pytest.mark.slow

N = 30
NAMES = ["a", "b", "c"]


def answer(requests: Path, server: Any, results: Path) -> int:
    """Each request line of a batch file sent to `server`, its reply written as a Batch
    API result line (`custom_id`, `response.status_code`, `response.body`)."""
    lines = [json.loads(line) for line in requests.read_text("utf-8").splitlines()]
    with results.open("w", encoding="utf-8") as handle:
        for number, line in enumerate(lines):
            reply = httpx.post(
                f"{server.base_url}/chat/completions",
                json=line["body"],
                headers={"authorization": "Bearer sk-test"},
            )
            response = {"status_code": reply.status_code, "request_id": f"r{number}"}
            row = {"id": f"b{number}", "custom_id": line["custom_id"], "error": None}
            handle.write(json.dumps({**row, "response": {**response, "body": reply.json()}}))
            handle.write("\n")
    return len(lines)


def run(tmp_path: Path, cache: str, *args: str) -> int:
    env = {"JUROR_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path / cache)}
    return main(["grade", *args, "--max-error-rate", "1"], env=env)


def votes(record: dict[str, Any]) -> tuple[Any, ...]:
    """What decides a panel record, and every vote: nothing of timing or tokens, and of a
    failed vote its status (a batch has no repair: its parse error does not say `after one
    repair`, as a single judge's import)."""
    panel = record["panel"]
    jurors = [(v["juror"], v["status"], v["label"]) for v in panel["jurors"]]
    failed = [(f["juror"], f["status"]) for f in panel["failed"]]
    keys = ("outcome", "votes", "graded_by", "tally")
    return (
        record["id"],
        record["status"],
        record["label"],
        *(panel[k] for k in keys),
        failed,
        jurors,
    )


@pytest.fixture
def planted(server_factory: Any) -> tuple[dict[str, str], dict[str, Any]]:
    truth = planted_truth(N, id_format="c{:03d}")
    jurors = plant_panel(
        truth,
        LABELS,
        error_rates=[0.2, 0.25, 0.15],
        shared=[0, 1],
        malformed_rate=[0, 0, 0.1],
        seed=1,
    )
    return truth, start_jurors(server_factory, jurors, NAMES)


@pytest.mark.parametrize("mode", ["full", "cyclic"])
def test_export_then_import_is_the_live_panel(
    tmp_path: Path,
    planted: tuple[dict[str, str], dict[str, Any]],
    mode: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    truth, servers = planted
    rules = {"mode": mode, "overlap": 6} if mode == "cyclic" else {}
    jury = write_jury(tmp_path / "jury.yaml", servers, **rules)
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    common = [str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS), "--jury", str(jury)]
    live = tmp_path / "live"
    assert run(tmp_path, "live-cache", *common, "-o", str(live)) == 0
    for server in servers.values():
        server.reset_stats()

    batch, requests, results = tmp_path / "batch", tmp_path / "requests", tmp_path / "results"
    assert (
        run(tmp_path, "batch-cache", *common, "-o", str(batch), "--export-batch", str(requests))
        == 0
    )
    assert sum(s.stats.requests for s in servers.values()) == 0  # an export sends nothing
    assert sorted(p.name for p in requests.iterdir()) == ["a.jsonl", "b.jsonl", "c.jsonl"]
    results.mkdir()
    sent = {n: answer(requests / f"{n}.jsonl", servers[n], results / f"{n}.jsonl") for n in NAMES}
    if mode == "full":
        assert sent == {n: N for n in NAMES}
    else:  # one juror a case, all three on the overlap's 6: the cost of one judge and a bit
        assert sum(sent.values()) == N + 2 * 6
    for server in servers.values():
        server.reset_stats()

    with (results / "a.jsonl").open("a", encoding="utf-8") as handle:  # a line of no case
        stray = {"custom_id": "nowhere", "response": {"status_code": 200, "body": {}}}
        handle.write(json.dumps({**stray, "error": None}) + "\n")
    summary = batch / "summary.json"
    imported = [
        *common,
        "-o",
        str(batch),
        "--import-batch",
        str(results),
        "--summary",
        str(summary),
    ]
    assert run(tmp_path, "batch-cache", *imported) == 0
    assert sum(s.stats.requests for s in servers.values()) == 0  # the replies are the files'
    panel, live_panel = read_jsonl(batch / "policy.jsonl"), read_jsonl(live / "policy.jsonl")
    assert [votes(r) for r in panel] == [votes(r) for r in live_panel]
    for name in NAMES:  # each juror's records, as a single judge's import writes them
        assert len(read_jsonl(batch / "jurors" / f"{name}.jsonl")) == sent[name]
    if mode == "full":
        malformed = [
            r for r in panel if any(v["status"] == "parse_error" for v in r["panel"]["jurors"])
        ]
        assert len(malformed) == 3 and {r["panel"]["votes"] for r in malformed} == {"2 of 3"}
    jury_summary = json.loads(summary.read_text("utf-8"))["jury"]
    said = "juror a: 1 result line(s) match no case in the input and were ignored: 'nowhere'"
    assert jury_summary["import_warnings"] == [said]
    assert said in capsys.readouterr().err
    assert {n: j["requests"] for n, j in jury_summary["cost"]["jurors"].items()} == sent

    # a second export after the import: every juror's cases are graded, nothing to send
    again = tmp_path / "again"
    assert (
        run(tmp_path, "batch-cache", *common, "-o", str(batch), "--export-batch", str(again)) == 0
    )
    assert not again.exists() or not list(again.iterdir())


def test_what_a_jury_cannot_batch_is_refused(
    tmp_path: Path,
    planted: tuple[dict[str, str], dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    truth, servers = planted
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    base = [
        str(cases),
        "--rubric",
        "policy",
        "--rubrics-dir",
        str(RUBRICS),
        "-o",
        str(tmp_path / "o"),
    ]
    escalate = write_jury(tmp_path / "escalate.yaml", servers, mode="escalate")
    out = tmp_path / "requests"
    assert run(tmp_path, "c", *base, "--jury", str(escalate), "--export-batch", str(out)) == 2
    assert "mode: escalate does not batch" in capsys.readouterr().err
    assert not out.exists()

    jury = write_jury(tmp_path / "jury.yaml", servers)
    results = tmp_path / "results"
    results.mkdir()
    (results / "a.jsonl").write_text("", "utf-8")
    (results / "b.output.jsonl").write_text("", "utf-8")
    assert run(tmp_path, "c", *base, "--jury", str(jury), "--import-batch", str(results)) == 2
    assert "no results for juror 'c'" in capsys.readouterr().err
    (results / "c.jsonl").write_text("", "utf-8")
    (results / "d.jsonl").write_text("", "utf-8")
    assert run(tmp_path, "c", *base, "--jury", str(jury), "--import-batch", str(results)) == 2
    assert "d.jsonl names no juror of the jury" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p", "question": "q", "answer_a": "x", "answer_b": "y"}))
    paired = [str(pairs), "--rubric", "pairwise", "--jury", str(jury), "--export-batch", str(out)]
    assert run(tmp_path, "c", *paired) == 2
    assert "does not batch yet" in capsys.readouterr().err
    assert sum(s.stats.requests for s in servers.values()) == 0
