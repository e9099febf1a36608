"""Issue 50 end to end through the loopback test server, nothing planted in the engine:
two judges (a cheap and a strong model) grade labelled cases with confidences read from
the server's logprobs; `judge certify` certifies the two-rung cascade on them; `judge grade
--jury cascade.yaml --certificate` applies it to new cases (the strong judge asked only
where the cheap one did not decide, the rest escalated with the reason, every record citing
the certificate's sha256, the summary giving coverage and the cost against the strong judge
alone); `judge label` offers the escalated cases first; the certificate is refused (exit 2)
for another model.

What makes it certifiable: the test server's confidence is drawn from sha256 of the case
(judge.testing._logprobs: the written token's probability p in [0.5, 0.99], the same for
both models, since it depends on the case only). Alone it says nothing of correctness, so
each judge here is a responder that errs where the server will say it is unsure: the cheap
one answers a wrong label where p < 0.7, the strong one where p < 0.56 (the same p the
server then reports; the client reads it as a confidence p / (p + 0.8 (1 - p)), the
probability normalised over the labels). With 200 labelled cases, A = 0.9 and delta = 0.1
(0.05 a rung) the cheap rung certifies 0.726 (p about 0.68) and the strong one 0.611 (p
about 0.56): on the 80 new cases the cheap judge decides 49, the strong one 23, and 8 are
escalated, and the 72 decided agree with the planted truth on 0.972 of them (figures of this
seeded draw; the test asserts the relations and A, not the figures)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judge.cli import main
from judge.label.labelset import LabelPlan, open_label_store
from judge.label.queue import Queues
from judge.rubric import load_rubric
from judge.testing._logprobs import _drawn
from judge.testing.jurors import bracketed_id, planted_truth, write_cases
from judge.testing.server import ChatRequest, Reply, default_verdict
from tests.helpers import REPO, read_jsonl

RUBRICS = REPO / "examples" / "rubrics"
LABELS = ("compliant", "minor_issue", "violation")  # the policy rubric's
CHEAP, STRONG = "gpt-4o-mini-2024-07-18", "gpt-4o"  # priced in judge.engine.pricing
OTHER = "gpt-4o-mini"  # another model, its name starting with the strong one's
UNSURE = {CHEAP: 0.7, STRONG: 0.56}  # below this p a judge answers a wrong label
PRICES = {CHEAP: (0.15, 0.60), STRONG: (2.50, 10.00)}  # per million tokens
LABELLED, NEW = 200, 80


@dataclass
class UnsureJuror:
    """Answers the true label where the test server will give its label token p >= `unsure`,
    a wrong one below (so agreement with people rises with the confidence)."""

    truth: Mapping[str, str]
    unsure: float

    def __call__(self, chat: ChatRequest) -> Reply | dict[str, Any]:
        verdict = default_verdict(chat)
        key = str(bracketed_id(chat.payload))
        right = self.truth[key]
        sure = _drawn(chat.case_text, ("label",)) >= self.unsure
        verdict["label"] = right if sure else LABELS[(LABELS.index(right) + 1) % 3]
        verdict["rationale"] = f"simulated verdict on {key}"
        return verdict


def grade_args(cases: Path, out: Path) -> list[str]:
    rubric = ["--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    return ["grade", str(cases), *rubric, "-o", str(out)]


def test_confidences_from_logprobs_certified_and_applied_end_to_end(
    tmp_path: Path, server_factory: Any, capsys: Any
) -> None:
    labelled = planted_truth(LABELLED, id_format="L{:03d}")
    new = planted_truth(NEW, seed=11, id_format="N{:03d}")
    truth = {**labelled, **new}
    servers = {m: server_factory(responder=UnsureJuror(truth, UNSURE[m]), model=m) for m in PRICES}
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-x"}

    # 1. each judge grades the labelled cases; confidences come from the logprobs
    cases = write_cases(tmp_path / "labelled.jsonl", labelled)
    for model, name in ((CHEAP, "cheap"), (STRONG, "strong")):
        args = grade_args(cases, tmp_path / f"{name}.jsonl")
        args += ["--model", model, "--base-url", servers[model].base_url]
        assert main(args, env=env) == 0
        records = read_jsonl(tmp_path / f"{name}.jsonl")
        assert len(records) == LABELLED
        assert {r["confidence_source"] for r in records} == {"logprobs"}
        assert all(0.5 <= r["confidence"] <= 1.0 for r in records)
        assert len({r["confidence"] for r in records}) > LABELLED * 0.9  # drawn per case

    # 2. certify the two-rung cascade against people's labels
    human = tmp_path / "human.csv"
    human.write_text("id,label\n" + "".join(f"{i},{t}\n" for i, t in labelled.items()), "utf-8")
    cert = tmp_path / "cert.json"
    certify = ["certify", str(tmp_path / "cheap.jsonl"), str(tmp_path / "strong.jsonl")]
    certify += ["--labels", str(human), "--agreement", "0.9", "-o", str(cert)]
    assert main(certify, env={}) == 0
    body = json.loads(cert.read_text("utf-8"))
    rungs = body["rungs"]
    thresholds = [rung["threshold"] for rung in rungs]
    assert body["certified"] is True and None not in thresholds
    assert [rung["judge"]["model"] for rung in rungs] == [CHEAP, STRONG]
    assert rungs[0]["reached"] == LABELLED and 0 < rungs[0]["decided"] < LABELLED
    assert rungs[1]["reached"] == LABELLED - rungs[0]["decided"] and rungs[1]["decided"] > 0
    assert body["cost"]["cascade_per_1000"] < body["cost"]["last_rung_per_1000"]

    # 3. apply it to new cases through a cascade of the same two judges
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
    for server in servers.values():
        server.reset_stats()
    fresh = write_cases(tmp_path / "new.jsonl", new)
    graded = tmp_path / "graded"  # a jury writes a folder: the panel, jurors/
    apply = ["--jury", str(jury), "--certificate", str(cert)]
    summary_args = ["--summary", str(tmp_path / "s.json")]
    assert main([*grade_args(fresh, graded), *apply, *summary_args], env=env) == 0

    # the strong judge was asked only about what the cheap one did not decide
    cheap = {r["id"]: r for r in read_jsonl(graded / "jurors" / "cheap.jsonl")}
    strong = {r["id"]: r for r in read_jsonl(graded / "jurors" / "strong.jsonl")}
    by_cheap = {i for i in new if cheap[i]["confidence"] >= thresholds[0]}
    assert set(cheap) == set(new) and set(strong) == set(new) - by_cheap
    by_strong = {i for i in strong if strong[i]["confidence"] >= thresholds[1]}
    escalated = set(new) - by_cheap - by_strong
    assert by_cheap and by_strong and escalated  # every path taken (checked, not tuned: see top)
    assert servers[CHEAP].stats.requests == NEW
    assert servers[STRONG].stats.requests == NEW - len(by_cheap)

    # records: who decided, the reason for each escalation, the certificate's sha256
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    records = read_jsonl(graded / "policy.jsonl")
    assert [r["id"] for r in records] == list(new)
    for record in records:
        case_id = record["id"]
        assert record["certificate"] == digest
        if case_id in escalated:
            assert record["status"] == "escalated" and record["label"] is None
            assert record["error"] == (
                f"confidence {cheap[case_id]['confidence']:.3g} below rung 1's certified "
                f"threshold {thresholds[0]:.3g}; confidence {strong[case_id]['confidence']:.3g} "
                f"below rung 2's certified threshold {thresholds[1]:.3g}"
            )
        else:
            rung, model = (1, CHEAP) if case_id in by_cheap else (2, STRONG)
            assert record["decided_by"] == {"rung": rung, "model": model}
            assert record["status"] == "ok" and record["confidence_source"] == "logprobs"
    decided = [r for r in records if r["status"] == "ok"]
    agree = sum(r["label"] == new[r["id"]] for r in decided) / len(decided)
    assert agree >= 0.9  # the certified agreement held on these new cases

    # the summary: coverage, and the cost against the strong judge on every case
    summary = json.loads((tmp_path / "s.json").read_text("utf-8"))
    cascade = summary["cascade"]
    assert summary["status"] == {"escalated": len(escalated), "ok": NEW - len(escalated)}
    assert cascade["coverage"] == round((NEW - len(escalated)) / NEW, 6)
    assert [r["decided"] for r in cascade["rungs"]] == [len(by_cheap), len(by_strong)]
    assert cascade["certificate"]["sha256"] == digest
    costs = [
        sum(r["usage"]["prompt_tokens"] * p[0] + r["usage"]["completion_tokens"] * p[1] for r in t)
        / 1e6
        for t, p in ((cheap.values(), PRICES[CHEAP]), (strong.values(), PRICES[STRONG]))
    ]
    assert [r["cost_usd"] for r in cascade["rungs"]] == [round(c, 6) for c in costs]
    assert cascade["cost_all_last_rung_usd"] == round(costs[1] / len(strong) * NEW, 6)
    assert summary["estimated_cost_usd"] < cascade["cost_all_last_rung_usd"]

    # judge label: the escalated cases come first in every annotator's queue
    plan = LabelPlan(fresh, load_rubric("policy", RUBRICS), records=graded / "policy.jsonl")
    store = open_label_store(tmp_path / "labels.sqlite", plan)
    try:
        queues = Queues(store, seed=5)
        for annotator in ("ann", "bob"):
            order = queues.order(annotator)
            assert set(order[: len(escalated)]) == escalated and sorted(order) == sorted(new)
    finally:
        store.close()

    # bound to its judges: the same certificate is refused for another model, asking nobody
    spec[1]["model"] = OTHER
    jury.write_text(yaml.safe_dump({"mode": "cascade", "jurors": spec}), "utf-8")
    for server in servers.values():
        server.reset_stats()
    capsys.readouterr()
    other = tmp_path / "other"
    assert main([*grade_args(fresh, other), *apply], env=env) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rung 2 was certified for another judge" in err[0], err
    assert f"'{STRONG}' -> '{OTHER}'" in err[0] and str(cert) in err[0]
    assert sum(s.stats.requests for s in servers.values()) == 0 and not other.exists()
