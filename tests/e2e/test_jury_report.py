"""`judge grade --jury JURY.yaml --html REPORT.html`, no longer refused: one self-contained
file with the panel's summary and figures, each juror's figures, every case's votes juror
by juror (checked against each juror's own records file) and the split decisions with
their reasons. Three planted jurors on loopback test servers, one answering text that is
not JSON on some cases."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from judge.cli import main
from judge.report.html import fmt
from judge.testing.jurors import plant_panel, planted_truth, write_cases
from tests.e2e.test_jury import LABELS, NAMES, Make, grade, start_jurors, write_jury
from tests.engine.test_report_html import assert_self_contained
from tests.helpers import read_jsonl

N = 30


def vote_of(record: dict) -> str:
    """A juror's vote as the table shows it, from the juror's own record."""
    if record["status"] != "ok":
        return record["status"]
    return f"{record['label']} ({fmt(record['score'])})"


def rows_of(html: str) -> dict[str, list[str]]:
    """The votes table: each case id's cells."""
    part = html.split("<h2>Votes by case</h2>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", part)[1:]
    cells = [[unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)] for row in rows]
    return {row[0]: row for row in cells}


def test_a_jury_report_shows_the_panel_the_jurors_and_every_vote(
    tmp_path: Path, server_factory: Make
) -> None:
    truth = planted_truth(N, seed=3, id_format="c{:03d}")
    jurors = plant_panel(truth, LABELS, error_rates=[0.2, 0.25, 0.3],
                         malformed_rate=[0, 0, 0.15], seed=4)  # fmt: skip
    servers = start_jurors(server_factory, jurors, NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    html = tmp_path / "jury.html"
    jury = write_jury(tmp_path / "jury.yaml", servers)
    assert grade(tmp_path, jury, cases, out, "--html", str(html)) == 0
    text = html.read_text("utf-8")
    assert_self_contained(text)
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    panel = summary["jury"]

    own = {
        name: {r["id"]: r for r in read_jsonl(out / "jurors" / f"{name}.jsonl")} for name in NAMES
    }
    rows = rows_of(text)
    records = read_jsonl(out / "policy.jsonl")
    assert list(rows) == [r["id"] for r in records] == list(truth)
    for record in records:
        row = rows[record["id"]]
        assert row[1:6] == [record["status"], record["label"] or "-", fmt(record["score"]),
                            record["panel"]["outcome"], record["panel"]["votes"]]  # fmt: skip
        assert row[6:] == [vote_of(own[name][record["id"]]) for name in NAMES]
    assert any(row[-1] == "parse_error" for row in rows.values())  # the malformed juror

    # each juror's figures, computed from its own file
    jurors_table = text.split("<h2>Jurors</h2>")[1].split("</table>")[0]
    for name in NAMES:
        scores = [r["score"] for r in own[name].values() if r["status"] == "ok"]
        assert f"<td>{name}</td>" in jurors_table
        assert f"<td>{fmt(sum(scores) / len(scores))}</td>" in jurors_table
    assert fmt(panel["agreement"]["krippendorff_alpha"]) in text
    assert fmt(panel["agreement"]["krippendorff_alpha_ci95"]) in text

    # the split decisions: every case that was not unanimous (up to the cap), with reasons
    split = [r["id"] for r in records if r["panel"]["outcome"] != "unanimous"][:25]
    part = text.split("<h2>Split decisions</h2>")[1]
    assert re.findall(r"<strong>([^<]+)</strong>", part) == split
    assert "judge's reasons (juror a)" in part


def test_html_with_an_exported_jury_batch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jury = tmp_path / "jury.yaml"
    jury.write_text("jurors: [{name: a, model: m1}, {name: b, model: m2}]\n", "utf-8")
    cases = write_cases(tmp_path / "cases.jsonl", planted_truth(3))
    args = ["grade", str(cases), "--rubric", "policy", "--jury", str(jury)]
    args += ["--export-batch", str(tmp_path / "req"), "--html", str(tmp_path / "r.html")]
    assert main(args, env={}) == 2
    assert "--html needs graded records" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "req").exists()
