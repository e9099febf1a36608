"""`judge calibrate` over a jury's records through the loopback test server: each juror's
and the panel's kappa against people side by side (each equal to sklearn's on the same
labels, a missing label a disagreement), the same figures `judge grade --jury
--human-labels` gives, and `--fail-if` on them under judge.jury.gates' names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from judge.cli import main
from judge.testing.jurors import write_cases
from tests.e2e.test_jury import (
    NAMES,
    RUBRICS,
    correlated,
    independent,
    planted_truth,
    start_jurors,
    write_jury,
)
from tests.helpers import read_jsonl

# juries of three through the test server, calibrated: minutes; run by .ci/slow
pytestmark = pytest.mark.slow


def calibrate(records: Path, human: Path, report: Path, *gates: str) -> int:
    args = ["calibrate", str(records), str(human), "-o", str(report), "--bootstrap", "200"]
    for gate in gates:
        args += ["--fail-if", gate]
    return main(args, env={})


@pytest.mark.parametrize(("plant", "beats"), [(correlated, False), (independent, True)])
def test_calibrate_a_jury_side_by_side(
    tmp_path: Path,
    server_factory: Any,
    capsys: pytest.CaptureFixture[str],
    plant: Any,
    beats: bool,
) -> None:
    truth = planted_truth()
    servers = start_jurors(server_factory, plant(truth), NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    human = tmp_path / "human.csv"
    human.write_text("id,label\n" + "".join(f"{i},{t}\n" for i, t in truth.items()), "utf-8")
    jury = write_jury(tmp_path / "jury.yaml", servers)
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    args += ["--jury", str(jury), "-o", str(out), "--summary", str(out / "summary.json")]
    args += ["--human-labels", str(human), "--max-error-rate", "1"]
    env = {"JUROR_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert main(args, env=env) == 0
    graded = json.loads((out / "summary.json").read_text("utf-8"))["jury"]["vs_humans"]

    report = tmp_path / "report"
    assert calibrate(out / "policy.jsonl", human, report) == 0
    printed = capsys.readouterr().out
    jury = json.loads((report / "calibration.json").read_text("utf-8"))["jury"]
    columns = {n: read_jsonl(out / "jurors" / f"{n}.jsonl") for n in NAMES}
    columns["panel"] = read_jsonl(out / "policy.jsonl")
    for name, records in columns.items():
        given = [r["label"] if r["status"] == "ok" else "(none)" for r in records]
        expected = cohen_kappa_score(list(truth.values()), given)
        assert jury["members"][name]["kappa"] == pytest.approx(expected, abs=1e-6)
        assert jury["members"][name]["kappa"] == graded["members"][name]["kappa"]
        assert jury["members"][name]["ac1"] == graded["members"][name]["ac1"]
    assert jury["best_juror"] == graded["best_juror"]
    # 60 cases: the planted independent panel is ahead of every juror, but against the best
    # one only 7 to 1 on the discordant cases (McNemar p 0.07 before the correction over the
    # jurors), too few to call "better" once the best juror is not chosen on the same labels
    # (issue 34): the verdict holds back, the point differences show the lead.
    versus = jury["panel_vs_best"]
    assert versus["verdict"] == "no_difference"
    assert "max-statistic" in versus["method"]
    ahead = [j["kappa_difference"] > 0.1 for j in versus["per_juror"].values()]
    assert all(ahead) if beats else not all(ahead)
    assert jury["cost_ratio"] == pytest.approx(graded["cost_ratio"], rel=1e-6)
    assert "jury (full), against people: a kappa" in printed

    best = jury["best_juror"]
    gated = tmp_path / "gated"
    # neither panel is shown better than its best juror at 60 cases (above): the gate fails
    assert calibrate(out / "policy.jsonl", human, gated, "panel.beats_best < 1") == 3
    capsys.readouterr()
    assert calibrate(out / "policy.jsonl", human, gated, f"juror.{best}.kappa < 0.99") == 3
    assert calibrate(out / "policy.jsonl", human, gated, "panel.kappa < 0", "juror.a.ac1 < 0") == 0
    capsys.readouterr()
    assert calibrate(out / "policy.jsonl", human, gated, "juror.z.kappa < 1") == 3
    assert "the jury has no juror 'z'" in capsys.readouterr().out
    # a single judge's records have no jury: a gate on its figures fails, saying why
    assert calibrate(out / "jurors" / "a.jsonl", human, gated, "panel.kappa < 1") == 3
    assert "not a jury's panel records" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # a typo: refused as the options are read
        calibrate(out / "policy.jsonl", human, gated, "panel.kapa < 1")
    assert refused.value.code == 2
    assert "over a jury's panel records also: panel.kappa" in capsys.readouterr().err
