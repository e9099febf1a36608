"""`mode: cyclic` through the loopback test server: one juror a case, chosen from the
case's id, every juror on a small overlap; the records say who graded each case, the
panel's agreement is measured on the overlap only, and a rerun sends nothing."""

from __future__ import annotations

import json
from hashlib import sha256
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
import yaml

from judge.cli import main
from judge.jury import load_jury
from judge.testing import FakeOpenAIServer
from judge.testing.jurors import POLICY_LABELS, plant_panel, planted_truth, write_cases
from tests.helpers import REPO, read_jsonl

# a jury end to end against juror servers (.ci/slow runs it)
pytestmark = pytest.mark.slow

RUBRICS = REPO / "examples" / "rubrics"
N = 90
NAMES = ["a", "b", "c"]


def write_jury(path: Path, servers: dict[str, FakeOpenAIServer], **rules: Any) -> Path:
    jurors = [
        {"name": n, "model": s.model, "base_url": s.base_url, "concurrency": 4}
        for n, s in servers.items()
    ]
    path.write_text(yaml.safe_dump({"jurors": jurors, **rules}), "utf-8")
    return path


def grade(tmp_path: Path, jury: Path, cases: Path, out: Path, *extra: str) -> int:
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--jury", str(jury), "-o", str(out), "--summary", str(out / "summary.json")]
    args += ["--max-error-rate", "1", *extra]
    return main(args, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})


def expected_juror(case_id: str) -> str:
    """The documented rule, computed independently: int(sha256(id)) mod k."""
    return NAMES[int(sha256(case_id.encode()).hexdigest(), 16) % len(NAMES)]


def expected_overlap(ids: list[str], m: int) -> set[str]:
    return set(sorted(ids, key=lambda i: sha256(f"overlap:{i}".encode()).hexdigest())[:m])


def test_cyclic_sends_one_request_a_case_and_every_juror_on_the_overlap(
    tmp_path: Path, server_factory: Any
) -> None:
    truth = planted_truth(N, id_format="c{:03d}")
    jurors = plant_panel(
        truth,
        POLICY_LABELS,
        error_rates=[0.2, 0.25, 0.15],
        shared=[0, 1],
        malformed_rate=[0, 0, 0.1],
        seed=1,
    )
    servers = {
        n: server_factory(responder=j, model=f"juror-{n}-2024-01-01")
        for n, j in zip(NAMES, jurors, strict=True)
    }
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    jury = write_jury(tmp_path / "jury.yaml", servers, mode="cyclic", overlap=0.1)
    assert grade(tmp_path, jury, cases, out) == 0

    overlap = expected_overlap(list(truth), 9)
    records = read_jsonl(out / "policy.jsonl")
    assert [r["id"] for r in records] == list(truth)
    graded: dict[str, set[str]] = {n: set() for n in NAMES}
    for record in records:
        panel = record["panel"]
        assert panel["mode"] == "cyclic"
        if record["id"] in overlap:
            assert panel["overlap"] is True and panel["graded_by"] == NAMES
        else:
            only = expected_juror(record["id"])
            assert panel["overlap"] is False and panel["graded_by"] == [only]
            assert [v["juror"] for v in panel["jurors"]] == [only]
            vote = panel["jurors"][0]
            assert panel["votes"] == ("1 of 1" if vote["status"] == "ok" else "0 of 1")
            assert (record["status"], record["label"]) == (vote["status"], vote["label"])
        for name in panel["graded_by"]:
            graded[name].add(record["id"])
    assert {r["id"] for r in records if r["panel"]["overlap"]} == overlap
    for name, juror in zip(NAMES, jurors, strict=True):
        # one request a case it grades (and the one repair where its reply is not JSON)
        repairs = len(graded[name] & juror.malformed)
        assert servers[name].stats.requests == len(graded[name]) + repairs, name
        own = read_jsonl(out / "jurors" / f"{name}.jsonl")
        assert [r["id"] for r in own] == [i for i in truth if i in graded[name]]
    assert sum(len(g) for g in graded.values()) == N - 9 + 3 * 9
    assert all(len(g - overlap) >= N // 6 for g in graded.values())  # each a fair share

    summary = json.loads((out / "summary.json").read_text("utf-8"))
    jury_summary = summary["jury"]
    assert jury_summary["overlap"] == {"cases": 9, "of": N}
    assert jury_summary["graded_by"] == {n: len(g) for n, g in graded.items()}
    assert jury_summary["agreement"]["cases"] == 9
    on_overlap = [r for r in records if r["panel"]["overlap"]]
    codes = {label: i for i, label in enumerate(POLICY_LABELS)}
    data = np.array(
        [
            [codes[v["label"]] if v["status"] == "ok" else np.nan for v in r["panel"]["jurors"]]
            for r in on_overlap
        ]
    ).T
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert jury_summary["agreement"]["krippendorff_alpha"] == pytest.approx(expected, abs=1e-6)

    for server in servers.values():
        server.reset_stats()
    assert grade(tmp_path, jury, cases, out) == 0
    assert sum(s.stats.requests for s in servers.values()) == 0
    assert read_jsonl(out / "policy.jsonl") == records


def test_the_overlap_is_a_count_or_a_share_and_only_for_cyclic(tmp_path: Path) -> None:
    def load(**spec: Any) -> Any:
        jurors = [{"name": n, "model": "m"} for n in NAMES]
        path = tmp_path / "jury.yaml"
        path.write_text(yaml.safe_dump({"jurors": jurors, **spec}), "utf-8")
        return load_jury(path)

    assert load(mode="cyclic").overlap_share == 0.1
    assert load(mode="cyclic", overlap=12).overlap_share == 12
    for bad in (
        {"mode": "cyclic", "overlap": 1.0},
        {"overlap": 5},
        {"mode": "cyclic", "overlap": -1},
    ):
        with pytest.raises(Exception, match="jury.yaml") as caught:
            load(**bad)
        assert "overlap" in str(caught.value)
