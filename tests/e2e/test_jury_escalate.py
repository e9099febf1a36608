"""`mode: escalate` through the loopback test server: the first juror grades every case,
the others only the cases where it is unsure; requests and cost per juror in the summary,
and a rerun sends nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from judge.cli import main
from judge.testing.jurors import POLICY_LABELS, plant_panel, planted_truth, write_cases
from tests.helpers import REPO, read_jsonl

RUBRICS = REPO / "examples" / "rubrics"
N = 80
NAMES = ["a", "b", "c"]


@pytest.mark.slow  # a jury through the test server: a minute; .ci/slow
def test_escalate_asks_the_rest_only_where_the_first_juror_is_unsure(
    tmp_path: Path, server_factory: Any
) -> None:
    truth = planted_truth(N, id_format="c{:03d}")
    jurors = plant_panel(
        truth,
        POLICY_LABELS,
        error_rates=[0.25, 0.1, 0.1],
        malformed_rate=[0.1, 0, 0],
        seed=5,
    )
    servers = {
        n: server_factory(responder=j, model=f"juror-{n}-2024-01-01")
        for n, j in zip(NAMES, jurors, strict=True)
    }
    spec = [{"name": n, "model": s.model, "base_url": s.base_url} for n, s in servers.items()]
    spec[0]["price"] = {"input": 0.1, "output": 0.4}
    for juror in spec[1:]:
        juror["price"] = {"input": 2.5, "output": 10.0}
    jury = tmp_path / "jury.yaml"
    rules = {"mode": "escalate", "escalate": {"labels": ["minor_issue"]}}
    jury.write_text(yaml.safe_dump({"jurors": spec, **rules}), "utf-8")
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--jury", str(jury), "-o", str(out), "--summary", str(out / "summary.json")]
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert main(args, env=env) == 0

    first = jurors[0]
    said = {i: first.errors.get(i, t) for i, t in truth.items()}
    escalated = set(first.malformed) | {
        i for i, label in said.items() if label == "minor_issue" and i not in first.malformed
    }
    assert 0 < len(escalated) < N
    assert servers["a"].stats.requests == N + len(first.malformed)  # its repairs besides
    assert servers["b"].stats.requests == servers["c"].stats.requests == len(escalated)

    records = read_jsonl(out / "policy.jsonl")
    assert [r["id"] for r in records] == list(truth)
    for record in records:
        panel = record["panel"]
        if record["id"] in escalated:
            assert panel["graded_by"] == NAMES
            why = "status: parse_error" if record["id"] in first.malformed else "label: minor_issue"
            assert panel["escalated"] == why
        else:
            assert panel["graded_by"] == ["a"] and panel["escalated"] is None
            assert (panel["votes"], record["label"]) == ("1 of 1", said[record["id"]])
    correct = sum(r["label"] == truth[r["id"]] for r in records)
    assert correct > sum(said[i] == t for i, t in truth.items() if i not in first.malformed)

    summary = json.loads((out / "summary.json").read_text("utf-8"))["jury"]
    assert summary["mode"] == "escalate"
    assert summary["escalated"]["cases"] == len(escalated) and summary["escalated"]["of"] == N
    assert summary["escalated"]["why"] == {
        "label": len(escalated) - len(first.malformed),
        "status": len(first.malformed),
    }
    assert summary["agreement"]["cases"] == len(escalated)
    cost = summary["cost"]
    assert {n: cost["jurors"][n]["requests"] for n in NAMES} == {
        "a": N,
        "b": len(escalated),
        "c": len(escalated),
    }
    assert cost["requests_per_case"] == round((N + 2 * len(escalated)) / N, 6)
    assert cost["total_usd"] == round(sum(cost["jurors"][n]["cost_usd"] for n in NAMES), 6)

    for server in servers.values():
        server.reset_stats()
    human = tmp_path / "human.csv"
    human.write_text("id,label\n" + "".join(f"{i},{t}\n" for i, t in truth.items()), "utf-8")
    assert main([*args, "--human-labels", str(human)], env=env) == 0
    assert sum(s.stats.requests for s in servers.values()) == 0
    assert read_jsonl(out / "policy.jsonl") == records
    # against people: the escalating panel against its first juror alone, on every case
    vs = json.loads((out / "summary.json").read_text("utf-8"))["jury"]["vs_humans"]
    assert set(vs["members"]) == {"a", "panel"} and vs["best_juror"] == "a"
    first_given = [r["label"] if r["status"] == "ok" else "(none)" for r in own_a(out)]
    panel_given = [r["label"] if r["status"] == "ok" else "(none)" for r in records]
    for member, given in (("a", first_given), ("panel", panel_given)):
        expected = cohen_kappa_score(list(truth.values()), given)
        assert vs["members"][member]["kappa"] == pytest.approx(expected, abs=1e-6)
    assert vs["members"]["panel"]["kappa"] > vs["members"]["a"]["kappa"]


def own_a(out: Path) -> list[dict[str, Any]]:
    return read_jsonl(out / "jurors" / "a.jsonl")


def test_a_first_juror_sure_of_every_case_is_the_only_one_asked(
    tmp_path: Path, server_factory: Any, capsys: Any
) -> None:
    truth = planted_truth(20, id_format="c{:03d}")
    jurors = plant_panel(truth, POLICY_LABELS, error_rates=[0.0, 0.1, 0.1], seed=2)
    servers = {
        n: server_factory(responder=j, model=f"juror-{n}-2024-01-01")
        for n, j in zip(NAMES, jurors, strict=True)
    }
    spec = [{"name": n, "model": s.model, "base_url": s.base_url} for n, s in servers.items()]
    jury = tmp_path / "jury.yaml"
    jury.write_text(yaml.safe_dump({"jurors": spec, "mode": "escalate"}), "utf-8")
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--jury", str(jury), "-o", str(out), "--summary", str(out / "summary.json")]
    args += ["--fail-if", "panel.alpha < 0.5"]
    # nothing escalated: no agreement to measure, so the gate on it fails, saying why
    assert main(args, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}) == 3
    assert "panel.alpha < 0.5" in capsys.readouterr().err
    assert servers["a"].stats.requests == 20
    assert servers["b"].stats.requests == servers["c"].stats.requests == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))["jury"]
    assert summary["escalated"] == {"cases": 0, "of": 20, "why": {}}
    assert summary["agreement"]["cases"] == 0
    records = read_jsonl(out / "policy.jsonl")
    assert [r["label"] for r in records] == list(truth.values())
