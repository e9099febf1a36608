"""No figure from nothing (issue 37): every command that can read a run where no verdict
parsed (every reply cut off at max_tokens, finish_reason "length", from the loopback test
server) runs on it, and nothing it prints, on stdout, stderr or in its Markdown, holds
`None`, `nan` or an unrounded float; the jury prints no kappa, interval, best juror or
n_eff and says how many cases were decided and why; a probe that could measure nothing
exits non-zero and says why on screen, telling "nothing parsed" from "no variation"."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.testing import FakeOpenAIServer
from judge.testing.server import ChatRequest, FaultPlan, Reply
from tests.helpers import REPO

LEAKS = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|(?<![$\d])\d+\.\d{5,}")
MAX_TOKENS = "20"


@dataclass
class Shown:
    code: int
    out: str
    err: str


@dataclass
class Setup:
    tmp: Path
    cases: Path
    pairs: Path
    labels: Path
    jury: Path
    env: dict[str, str]

    def run(self, capsys: pytest.CaptureFixture[str], *args: Any) -> Shown:
        code = main([str(a) for a in args], env=self.env)
        captured = capsys.readouterr()
        return Shown(code, captured.out, captured.err)


def first_lines(source: Path, target: Path, n: int) -> Path:
    target.write_text("".join(f"{line}\n" for line in source.read_text().splitlines()[:n]))
    return target


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    cases = first_lines(REPO / "examples" / "cases.jsonl", tmp_path / "cases.jsonl", 2)
    pairs = first_lines(REPO / "examples" / "pairs.jsonl", tmp_path / "pairs.jsonl", 2)
    ids = [json.loads(line)["id"] for line in cases.read_text().splitlines()]
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "id,label\n" + "".join(f"{i},{n}\n" for i, n in zip(ids, (3, 4), strict=True))
    )
    plan = FaultPlan(rate_truncated=1.0)  # every reply cut off: nothing parses
    with (
        FakeOpenAIServer(faults=plan, model="a-2024-01-01") as a,
        FakeOpenAIServer(faults=plan, model="b-2024-01-01") as b,
    ):
        jurors = [
            {"name": name, "model": s.model, "base_url": s.base_url}
            for name, s in (("a", a), ("b", b))
        ]
        jury = tmp_path / "jury.yaml"
        jury.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
        env = {
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": a.base_url,
            "JUDGE_MODEL": a.model,
        }
        yield Setup(tmp_path, cases, pairs, labels, jury, env)


def clean(shown: Shown, *markdown: Path) -> str:
    text = shown.out + shown.err + "".join(p.read_text() for p in markdown if p.exists())
    leaks = sorted({m.group(0) for m in LEAKS.finditer(text)})
    assert not leaks, f"{leaks} in:\n{text}"
    return text


def test_every_command_on_a_run_where_nothing_parsed(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    s, t = setup, setup.tmp
    limit = ["--max-tokens", MAX_TOKENS]
    graded = {}
    for name in ("a", "b"):
        graded[name] = t / f"{name}.jsonl"
        shown = s.run(
            capsys,
            "grade",
            s.cases,
            "--rubric",
            "relevance",
            "-o",
            graded[name],
            "--human-labels",
            s.labels,
            *limit,
        )
        assert shown.code == 1
        assert "no estimates" in clean(shown)
    jury = s.run(
        capsys,
        "grade",
        s.cases,
        "--rubric",
        "relevance",
        "--jury",
        s.jury,
        "-o",
        t / "jury",
        "--human-labels",
        s.labels,
        *limit,
    )
    assert jury.code == 1
    text = clean(jury)
    assert f"0 of 2 cases decided: 2 cut off at --max-tokens {MAX_TOKENS}" in text
    for figure in ("kappa", "alpha", "n_eff", "best juror", "unanimous"):
        assert figure not in jury.out, figure
    summary = json.loads((t / "jury" / "relevance.jsonl").read_text().splitlines()[0])
    assert summary["status"] == "parse_error"

    for probe, data, rubric in (
        ("position", s.pairs, "pairwise"),
        ("verbosity", s.cases, "relevance"),
        ("repeat", s.cases, "relevance"),
        ("injection", s.cases, "relevance"),
    ):
        out = t / f"{probe}.json"
        shown = s.run(capsys, "probe", probe, data, "--rubric", rubric, "-o", out, *limit)
        assert shown.code == 1, probe
        assert "the probe failed" in clean(shown, out.with_suffix(".md"))
    repeat = (t / "repeat.md").read_text()
    assert "no variation" not in repeat and "no case has every repeat parsed" in repeat
    out = t / "jury-repeat.json"
    shown = s.run(
        capsys,
        "probe",
        "repeat",
        s.cases,
        "--rubric",
        "relevance",
        "--jury",
        s.jury,
        "-o",
        out,
        *limit,
    )
    assert shown.code == 1
    clean(shown, out.with_suffix(".md"))

    records = t / "jury" / "relevance.jsonl"
    for args in (
        ["calibrate", graded["a"], s.labels, "-o", t / "cal"],
        ["calibrate", records, s.labels, "-o", t / "jcal"],
        ["gate", "--baseline", graded["a"], "--candidate", graded["b"], "--labels", s.labels],
        [
            "align",
            "--rubric",
            "relevance",
            "--labels",
            s.labels,
            "--records",
            graded["a"],
            "--cases",
            s.cases,
            "--split",
            "test=0.5",
            "--rubrics-dir",
            t / "rubrics",
        ],
    ):
        shown = s.run(capsys, *args)
        assert shown.code == 2, args
        assert "every one of its 2 records was left out (status parse_error 2)" in clean(shown)
    shown = s.run(capsys, "compare", graded["a"], graded["b"])
    assert shown.code == 2 and "no verdict parsed" in clean(shown)


def cut_off_after(good: int) -> Callable[[ChatRequest], Reply]:
    """The first `good` requests answered, every later one cut off at max_tokens."""
    seen = [0]

    def reply(chat: ChatRequest) -> Reply:
        seen[0] += 1
        if seen[0] <= good:
            return Reply()  # the default verdict
        return Reply(content='{"rationale": "on to', finish_reason="length")

    return reply


def test_verbosity_with_no_graded_pair_exits_1_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plain answers parse, every padded one is cut off: no verdict failed outright
    for the plain answers, yet there are 0 pairs to measure."""
    cases = first_lines(REPO / "examples" / "cases.jsonl", tmp_path / "cases.jsonl", 2)
    with FakeOpenAIServer(responder=cut_off_after(2), model="m-2024-01-01") as server:
        env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-test"}
        args = [
            "probe",
            "verbosity",
            str(cases),
            "--rubric",
            "relevance",
            "--model",
            server.model,
            "--base-url",
            server.base_url,
            "-o",
            str(tmp_path / "v.json"),
        ]
        code = main(args, env=env)
    err = capsys.readouterr().err
    assert code == 1
    assert (
        "nothing could be measured: 0 graded pairs of versions: 10 of 12 verdicts "
        "failed (parse_error 10)" in err
    )
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["n"] == 0 and report["unmeasured"].startswith("0 graded pairs")
