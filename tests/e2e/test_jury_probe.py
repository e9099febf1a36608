"""`judge probe --jury` through the loopback test server: every probe request goes to
every juror (once: the cache answers a rerun), the figures are the panel's verdicts', and
each juror's are beside them and equal a single-judge probe of that juror: a panel of two
content-minded jurors and one position-biased one is consistent where its biased juror
is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.config import JudgeConfig
from judge.jury import load_jury, probe_with_jury
from judge.testing.jurors import plant_panel, planted_truth, write_cases
from judge.testing.server import ChatRequest
from tests.helpers import REPO

pytestmark = pytest.mark.slow  # jury probes against juror servers (.ci/slow runs it)

N = 10
RUBRICS = REPO / "examples" / "rubrics"


def prefers_good(chat: ChatRequest) -> dict[str, Any]:
    """Picks the answer that says `good`, wherever it is shown."""
    first = "good" in str(chat.payload.get("answer_A"))
    return {"rationale": "content", "winner": "A" if first else "B"}


def first_slot(chat: ChatRequest) -> dict[str, Any]:
    """Position-biased: the answer shown first, always."""
    return {"rationale": "first", "winner": "A"}


def write_pairs(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(N):  # the good answer is answer_a in even cases, answer_b in odd ones
            good, bad = f"a good answer {i}", f"a poor answer {i}"
            pair = (good, bad) if i % 2 == 0 else (bad, good)
            row = {"id": f"p{i}", "question": f"question {i}?", "answer_a": pair[0]}
            handle.write(json.dumps({**row, "answer_b": pair[1]}) + "\n")
    return path


def write_jury(path: Path, servers: dict[str, Any], **rules: Any) -> Path:
    spec = [{"name": n, "model": s.model, "base_url": s.base_url} for n, s in servers.items()]
    path.write_text(yaml.safe_dump({"jurors": spec, **rules}), "utf-8")
    return path


@pytest.fixture
def panel(server_factory: Any) -> dict[str, Any]:
    return {
        "a": server_factory(responder=prefers_good, model="juror-a-2024-01-01"),
        "b": server_factory(responder=prefers_good, model="juror-b-2024-01-01"),
        "c": server_factory(responder=first_slot, model="juror-c-2024-01-01"),
    }


def probe(tmp_path: Path, *args: str) -> int:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    return main(["probe", *args], env=env)


def test_position_on_a_panel_and_each_juror(
    tmp_path: Path, panel: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    jury = write_jury(tmp_path / "jury.yaml", panel)
    out = tmp_path / "panel.json"
    args = ["position", str(pairs), "--rubric", "pairwise", "--jury", str(jury), "-o", str(out)]
    assert probe(tmp_path, *args) == 0
    for server in panel.values():  # both orders of every pair, once each, to every juror
        assert server.stats.requests == 2 * N
    report = json.loads(out.read_text("utf-8"))
    assert report["judge_calls"] == 3 * 2 * N
    assert report["jury"]["requests_by_juror"] == {"a": 2 * N, "b": 2 * N, "c": 2 * N}
    # c, always for the first slot, is right in one order of each pair and outvoted in the other
    assert report["jury"]["outcomes"] == {"majority": N, "unanimous": N}
    # the panel follows its two content-minded jurors; c alone picks the first slot
    assert report["consistency_rate"] == 1.0
    jurors = report["jurors"]
    assert jurors["a"]["consistency_rate"] == jurors["b"]["consistency_rate"] == 1.0
    assert jurors["c"]["consistency_rate"] == 0.0
    assert jurors["c"]["first_position_win_rate"] == 1.0
    markdown = out.with_suffix(".md").read_text("utf-8")
    assert "## The panel and each juror" in markdown and "| c | 0.000" in markdown
    records = [json.loads(line) for line in out.with_suffix(".records.jsonl").open()]
    assert [r["panel"]["votes"] for r in records] == ["3 of 3"] * N

    # each juror's figures are a single judge's probe of that juror
    single = tmp_path / "single-c.json"
    c = panel["c"]
    alone = ["position", str(pairs), "--rubric", "pairwise", "-o", str(single)]
    assert probe(tmp_path, *alone, "--model", c.model, "--base-url", c.base_url) == 0
    by_itself = json.loads(single.read_text("utf-8"))
    for key in ("consistency_rate", "first_position_win_rate", "inconsistent", "resolved"):
        assert jurors["c"][key] == by_itself[key]

    # a rerun: the cache answers every juror; gates on the panel and on a juror
    for server in panel.values():
        server.reset_stats()
    gated = [*args, "--overwrite", "--fail-if", "consistency_rate < 0.9"]
    assert probe(tmp_path, *gated) == 0
    assert sum(s.stats.requests for s in panel.values()) == 0
    assert json.loads(out.read_text("utf-8"))["judge_calls"] == 0
    assert probe(tmp_path, *gated, "--fail-if", "juror.c.consistency_rate < 0.9") == 3
    capsys.readouterr()


def test_repeat_on_a_panel_with_a_malformed_juror(tmp_path: Path, server_factory: Any) -> None:
    truth = planted_truth(N, id_format="c{:03d}")
    labels = ["compliant", "minor_issue", "violation"]
    planted = plant_panel(truth, labels, error_rates=[0.0, 0.0, 0.0], malformed_rate=[0, 0, 0.2])
    servers = {
        name: server_factory(responder=juror, model=f"juror-{name}-2024-01-01")
        for name, juror in zip("abc", planted, strict=True)
    }
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    jury = write_jury(tmp_path / "jury.yaml", servers)
    out = tmp_path / "repeat.json"
    args = ["repeat", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    assert probe(tmp_path, *args, "--repeats", "3", "--jury", str(jury), "-o", str(out)) == 0
    assert servers["a"].stats.requests == servers["b"].stats.requests == 3 * N  # no cache
    report = json.loads(out.read_text("utf-8"))
    malformed = len(planted[2].malformed)
    assert malformed == 2
    # c's malformed cases leave the panel 2 of 3 votes, still a majority: every case ok
    assert report["status"] == {"ok": 3 * N}
    assert report["exact_agreement_rate"] == 1.0
    assert report["jurors"]["c"]["status"] == {"ok": 3 * (N - malformed), "parse_error": 6}
    assert report["jurors"]["c"]["complete_cases"] == N - malformed


@pytest.mark.parametrize(
    ("rules", "extra", "message"),
    [
        ({"mode": "cyclic"}, [], "takes a jury of mode: full, not mode: cyclic"),
        ({}, ["--fail-if", "juror.z.consistency_rate < 1"], "juror.z.consistency_rate"),
        ({}, ["--verdicts", "v.jsonl"], "--jury asks the jurors"),
    ],
)
def test_what_a_panel_probe_refuses_before_sending(
    tmp_path: Path,
    panel: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    rules: dict[str, Any],
    extra: list[str],
    message: str,
) -> None:
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    jury = write_jury(tmp_path / "jury.yaml", panel, **rules)
    args = ["position", str(pairs), "--rubric", "pairwise", "--jury", str(jury), *extra]
    assert probe(tmp_path, *args) == 2
    assert message in capsys.readouterr().err
    assert sum(s.stats.requests for s in panel.values()) == 0


def test_self_preference_with_a_jury_needs_the_panels_family(
    tmp_path: Path, panel: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    jury = write_jury(tmp_path / "jury.yaml", panel)
    args = ["self-preference", str(pairs), "--rubric", "pairwise", "--jury", str(jury)]
    assert probe(tmp_path, *args) == 2
    assert "needs --judge-family" in capsys.readouterr().err


def test_the_python_api_probes_a_panel(tmp_path: Path, panel: dict[str, Any]) -> None:
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    jury = load_jury(write_jury(tmp_path / "jury.yaml", panel))
    result = probe_with_jury(
        jury, "position", pairs, "pairwise", config=JudgeConfig(use_cache=False)
    )
    assert result.report["consistency_rate"] == 1.0
    assert result.report["jurors"]["c"]["consistency_rate"] == 0.0
    assert result.report["jury"]["requests"] == 3 * 2 * N
    assert [r.panel["votes"] for r in result.records or []] == ["3 of 3"] * N
