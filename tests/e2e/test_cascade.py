"""Grading under a certificate (issue 50, part 3) through the loopback test server: a
two-rung cascade asks the strong judge only about the cases the cheap one left undecided,
records who decided and the certificate's hash, escalates the rest with the reason, and
its summary gives the coverage and the cost against the strong judge alone; a certificate
made for another rubric or judge is refused (exit 2).

The confidences are planted: the judge's `evaluate` is wrapped so each verdict carries a
confidence fixed by the judge's model and the case's id (the test server's logprobs are
another part of the issue), the rest is the real client, server, resume and records."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from judge.cli import main
from judge.engine.certificate import certificate_hash
from judge.engine.model import LLMJudge
from judge.testing.jurors import PlantedJuror, planted_truth, write_cases
from judge.view import create_view_app, open_viewer
from tests.helpers import REPO, read_jsonl

RUBRICS = REPO / "examples" / "rubrics"
POLICY = RUBRICS / "policy" / "v1.yaml"
N = 40
CHEAP, STRONG = "cheap-2024-01-01", "strong-2024-01-01"
THRESHOLDS = (0.8, 0.7)
PRICES = {CHEAP: (0.1, 0.4), STRONG: (2.5, 10.0)}


def planted_confidence(model: str, case_id: str) -> float:
    """0..1, fixed by the model and the id (sha256, so no hash seed moves it)."""
    digest = hashlib.sha256(f"{model}\x00{case_id}".encode()).digest()
    return round(int.from_bytes(digest[:4], "big") / 2**32, 4)


@pytest.fixture
def confident(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model verdict carries its planted confidence (source `logprobs`)."""
    real = LLMJudge.evaluate

    async def evaluate(self: LLMJudge, rubric: Any, case: Any) -> Any:
        outcome = await real(self, rubric, case)
        outcome.confidence = planted_confidence(str(self.config.model), case.id)
        outcome.confidence_source = "logprobs"
        return outcome

    monkeypatch.setattr(LLMJudge, "evaluate", evaluate)


def judge_object(model: str) -> dict[str, Any]:
    """What a record of the test server's judge says of it (its `judge` field)."""
    return {"model": model, "temperature": 0.0, "seed": 42, "max_tokens": 1024}


def write_certificate(path: Path, models: list[str], thresholds: list[float | None]) -> dict:
    sha = hashlib.sha256(POLICY.read_bytes()).hexdigest()
    rungs = [
        {
            "records": f"rung{n}.jsonl",
            "judge": judge_object(m),
            "confidence_source": "logprobs",
            "threshold": t,
            "reached": 100,
            "decided": 50,
            "agreement": 0.93,
            "disagreement_upper": 0.1,
            "cost_per_1000": None,
        }
        for n, (m, t) in enumerate(zip(models, thresholds, strict=True), 1)
    ]
    body = {
        "format": "llm-judge-certificate/1",
        "agreement": 0.9,
        "delta": 0.1,
        "min_decided": 30,
        "n": 200,
        "rubric": {"id": "policy", "version": 1, "sha256": sha},
        "rungs": rungs,
        "coverage": 0.8,
        "coverage_ci95": [0.74, 0.85],
        "certified": True,
        "method": "fixed-sequence Clopper-Pearson",
        "assumes": "labelled cases from the same stream",
    }
    path.write_text(json.dumps(body, indent=2), "utf-8")
    return body


def cascade_setup(tmp_path: Path, server_factory: Any) -> tuple[dict, Any, list[str], Path]:
    truth = planted_truth(N, id_format="c{:03d}")
    servers = {m: server_factory(responder=PlantedJuror(truth), model=m) for m in PRICES}
    spec = [
        {
            "name": name,
            "model": m,
            "base_url": servers[m].base_url,
            "price": {"input": PRICES[m][0], "output": PRICES[m][1]},
        }
        for name, m in (("cheap", CHEAP), ("strong", STRONG))
    ]
    jury = tmp_path / "cascade.yaml"
    jury.write_text(yaml.safe_dump({"mode": "cascade", "jurors": spec}), "utf-8")
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--jury", str(jury)]
    return truth, servers, args, jury


def test_a_two_rung_cascade_asks_the_strong_judge_only_where_the_cheap_one_is_unsure(
    tmp_path: Path, server_factory: Any, confident: None, capsys: Any
) -> None:
    truth, servers, args, _ = cascade_setup(tmp_path, server_factory)
    cert = tmp_path / "cert.json"
    body = write_certificate(cert, [CHEAP, STRONG], list(THRESHOLDS))
    out = tmp_path / "out"
    args += ["--certificate", str(cert), "-o", str(out), "--summary", str(tmp_path / "s.json")]
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert main(args, env=env) == 0

    cheap = {i: planted_confidence(CHEAP, i) for i in truth}
    strong = {i: planted_confidence(STRONG, i) for i in truth}
    by_cheap = {i for i in truth if cheap[i] >= THRESHOLDS[0]}
    by_strong = {i for i in truth if i not in by_cheap and strong[i] >= THRESHOLDS[1]}
    escalated = set(truth) - by_cheap - by_strong
    assert by_cheap and by_strong and escalated  # the planted draw exercises every path
    assert servers[CHEAP].stats.requests == N
    assert servers[STRONG].stats.requests == N - len(by_cheap)

    digest = certificate_hash(body)
    records = read_jsonl(out / "policy.jsonl")
    assert [r["id"] for r in records] == list(truth)
    for record in records:
        case_id = record["id"]
        assert record["certificate"] == digest
        if case_id in escalated:
            assert record["status"] == "escalated" and "decided_by" not in record
            assert record["error"] == (
                f"confidence {cheap[case_id]:.3g} below rung 1's certified threshold 0.8; "
                f"confidence {strong[case_id]:.3g} below rung 2's certified threshold 0.7"
            )
            assert record["judge"]["model"] == STRONG
            assert record["label"] is None and record["score"] is None and record["verdict"]
        else:
            rung, model = (1, CHEAP) if case_id in by_cheap else (2, STRONG)
            assert record["decided_by"] == {"rung": rung, "model": model}
            assert record["status"] == "ok" and record["label"] == truth[case_id]
            assert record["confidence_source"] == "logprobs"

    summary = json.loads((tmp_path / "s.json").read_text("utf-8"))
    cascade = summary["cascade"]
    assert summary["status"] == {"escalated": len(escalated), "ok": N - len(escalated)}
    assert summary["scored"] == N - len(escalated)  # an escalated case is never scored
    assert cascade["coverage"] == round((N - len(escalated)) / N, 6)
    assert [r["decided"] for r in cascade["rungs"]] == [len(by_cheap), len(by_strong)]
    assert [r["reached"] for r in cascade["rungs"]] == [N, N - len(by_cheap)]
    assert cascade["escalated"] == len(escalated)
    assert cascade["certified_agreement"] == 0.9
    assert cascade["certificate"]["sha256"] == digest
    tokens = [read_jsonl(out / "jurors" / f"{n}.jsonl") for n in ("cheap", "strong")]
    costs = [
        sum(r["usage"]["prompt_tokens"] * p[0] + r["usage"]["completion_tokens"] * p[1] for r in t)
        / 1e6
        for t, p in zip(tokens, PRICES.values(), strict=True)
    ]
    assert [r["cost_usd"] for r in cascade["rungs"]] == [round(c, 6) for c in costs]
    all_strong = costs[1] / (N - len(by_cheap)) * N
    assert cascade["cost_all_last_rung_usd"] == round(all_strong, 6)
    assert summary["estimated_cost_usd"] == round(sum(round(c, 6) for c in costs), 6)
    assert summary["estimated_cost_usd"] < cascade["cost_all_last_rung_usd"]
    printed = capsys.readouterr().out
    assert f"cascade: {N - len(escalated)} of {N} cases decided" in printed
    assert f"{len(escalated)} escalated to people" in printed

    # a rerun asks nobody again and writes the same records
    for server in servers.values():
        server.reset_stats()
    assert main(args, env=env) == 0
    assert sum(s.stats.requests for s in servers.values()) == 0
    assert read_jsonl(out / "policy.jsonl") == records

    # calibrate leaves the escalated cases out of the agreement, and says how many
    human = tmp_path / "human.csv"
    human.write_text("id,label\n" + "".join(f"{i},{t}\n" for i, t in truth.items()), "utf-8")
    report = tmp_path / "report"
    capsys.readouterr()
    calibrate = ["calibrate", str(out / "policy.jsonl"), str(human), "-o", str(report)]
    main(calibrate)
    assert f"excluded from the judge file: {len(escalated)} (status escalated)" in (
        capsys.readouterr().out
    )
    figures = json.loads((report / "calibration.json").read_text("utf-8"))
    assert figures["n"] == N - len(escalated)
    assert figures["excluded"]["judge"] == {"status escalated": len(escalated)}

    # the viewer counts them by status and scores the decided cases only
    viewer = open_viewer([out], index_dir=tmp_path / "index", label_dir=tmp_path / "sets")
    try:
        with TestClient(create_view_app(viewer, token="t"), base_url="http://127.0.0.1") as c:
            auth = {"Authorization": "Bearer t"}
            runs = c.get("/api/runs", headers=auth).json()
            run = next(r for r in runs if r["path"] == str(out / "policy.jsonl"))
            assert run["status_counts"] == summary["status"]
            page = c.get(
                f"/api/runs/{run['id']}/records",
                params={"status": "escalated", "limit": 100},
                headers=auth,
            ).json()
            assert {r["id"] for r in page["records"]} == escalated
    finally:
        viewer.engine.close()


def test_a_single_judge_is_a_cascade_of_one(
    tmp_path: Path, server_factory: Any, confident: None
) -> None:
    truth = planted_truth(12, id_format="c{:03d}")
    server = server_factory(responder=PlantedJuror(truth), model=CHEAP)
    cert = tmp_path / "cert.json"
    write_certificate(cert, [CHEAP], [0.5])
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    out = tmp_path / "graded.jsonl"
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--model", CHEAP, "--base-url", server.base_url, "--certificate", str(cert)]
    args += ["-o", str(out), "--summary", str(tmp_path / "s.json")]
    assert main(args, env={"XDG_CACHE_HOME": str(tmp_path / "c")}) == 0
    records = read_jsonl(out)
    sure = {i for i in truth if planted_confidence(CHEAP, i) >= 0.5}
    assert 0 < len(sure) < len(truth)
    assert {r["id"] for r in records if r["status"] == "ok"} == sure
    assert all(r["decided_by"] == {"rung": 1, "model": CHEAP} for r in records if r["id"] in sure)
    assert len(read_jsonl(tmp_path / "graded.rung1.jsonl")) == len(truth)
    summary = json.loads((tmp_path / "s.json").read_text("utf-8"))["cascade"]
    assert summary["decided"] == len(sure) and summary["escalated"] == len(truth) - len(sure)
    # a gate on the coverage (exit 3), and on the escalated count
    gate = ["--fail-if", "cascade.coverage < 0.99"]
    assert main([*args, *gate], env={"XDG_CACHE_HOME": str(tmp_path / "c")}) == 3
    gate = ["--fail-if", f"status.escalated > {len(truth) - len(sure)}"]
    assert main([*args, *gate], env={"XDG_CACHE_HOME": str(tmp_path / "c")}) == 0
    assert main([*args, "--fail-if", "cascade.nothing > 1"]) == 2


def test_a_rung_without_a_threshold_or_a_verdict_without_a_confidence_decides_nothing(
    tmp_path: Path, server_factory: Any
) -> None:
    # no `confident` fixture, and the test server told to omit logprobs: no confidence
    truth = planted_truth(6, id_format="c{:03d}")
    server = server_factory(responder=PlantedJuror(truth), model=CHEAP, logprobs="omit")
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    base = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    base += ["--model", CHEAP, "--base-url", server.base_url]
    env = {"XDG_CACHE_HOME": str(tmp_path / "c")}
    for threshold, why in ((0.5, "no confidence at rung 1"), (None, "certified to decide nothing")):
        cert = tmp_path / "cert.json"
        write_certificate(cert, [CHEAP], [threshold])
        out = tmp_path / f"graded-{threshold}.jsonl"
        assert main([*base, "--certificate", str(cert), "-o", str(out)], env=env) == 0
        records = read_jsonl(out)
        assert {r["status"] for r in records} == {"escalated"}
        assert all(why in r["error"] for r in records)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda b: b["rubric"].update(version=2), "was made for rubric policy@2"),
        (lambda b: b["rubric"].update(sha256="0" * 64), "was made for rubric policy@1"),
        (lambda b: b["rungs"][1]["judge"].update(model="other-model"), "rung 2 was certified"),
        (lambda b: b["rungs"][0]["judge"].update(temperature=0.7), "temperature 0.7 -> 0.0"),
        (lambda b: b["rungs"].pop(), "a cascade of 1 rung(s); this run has 2 judge(s)"),
        (lambda b: b.update(format="something/2"), "not a certificate of format"),
        (lambda b: b.pop("rubric"), "rubric: Field required"),
        (lambda b: b["rungs"][0].pop("threshold"), "rungs.0.threshold: Field required"),
    ],
    ids=[
        "rubric-version",
        "rubric-sha256",
        "rung-2-model",
        "rung-1-temperature",
        "fewer-rungs",
        "format",
        "no-rubric",
        "no-threshold",
    ],
)
def test_a_certificate_for_another_rubric_or_judge_is_refused(
    tmp_path: Path, server_factory: Any, capsys: Any, change: Any, said: str
) -> None:
    _, servers, args, _ = cascade_setup(tmp_path, server_factory)
    cert = tmp_path / "cert.json"
    body = write_certificate(cert, [CHEAP, STRONG], list(THRESHOLDS))
    change(body)
    cert.write_text(json.dumps(body), "utf-8")
    out = tmp_path / "out"
    assert main([*args, "--certificate", str(cert), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err and str(cert) in err
    assert len(err.strip().splitlines()) == 1
    assert sum(s.stats.requests for s in servers.values()) == 0
    assert not (out / "policy.jsonl").exists()


def test_a_certificate_that_is_not_json_or_a_cascade_without_one_is_refused(
    tmp_path: Path, server_factory: Any, capsys: Any
) -> None:
    _, _, args, _ = cascade_setup(tmp_path, server_factory)
    cert = tmp_path / "cert.json"
    cert.write_text("{not json", "utf-8")
    assert main([*args, "--certificate", str(cert), "-o", str(tmp_path / "o")]) == 2
    assert f"--certificate {cert}: not JSON" in capsys.readouterr().err
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert "mode: cascade grades under a certificate" in capsys.readouterr().err


def test_a_single_judge_other_than_the_certified_one_is_refused(
    tmp_path: Path, server_factory: Any, capsys: Any
) -> None:
    truth = planted_truth(4, id_format="c{:03d}")
    server = server_factory(responder=PlantedJuror(truth), model=STRONG)
    cert = tmp_path / "cert.json"
    write_certificate(cert, [CHEAP], [0.5])
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--model", STRONG, "--base-url", server.base_url, "--certificate", str(cert)]
    assert main([*args, "-o", str(tmp_path / "g.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: --certificate {cert}: rung 1 was certified for another judge "
        f"(model '{CHEAP}' -> '{STRONG}')"
    ]
    assert server.stats.requests == 0 and not (tmp_path / "g.jsonl").exists()
