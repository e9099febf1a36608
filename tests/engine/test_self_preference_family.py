"""Issue 20 item 17: `--judge-family` takes a family name or a model name (mapped to its
family), the names are listed in the help, and a family that matches no answer is an
error before anything is sent (given) or a warning in the output and the report (read
from the model), never a silent report of 0 pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.cli import main
from judge.cli._main import build_parser
from judge.probes.families import FAMILY_NAMES, judge_family
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO

PAIRS = REPO / "examples" / "pairs.jsonl"


def probe(out: Path, *extra: str) -> int:
    argv = ["probe", "self-preference", str(PAIRS), "--rubric", "pairwise", "-o", str(out)]
    return main([*argv, *extra], env={})


@pytest.mark.parametrize("given", ["gpt-4o", "gpt-4o-2024-08-06", "openai", "OpenAI"])
def test_a_model_name_or_a_family_name_matches_the_same_pairs(tmp_path: Path, given: str) -> None:
    out = tmp_path / "sp.json"
    assert probe(out, "--judge-family", given) == 0
    report = json.loads(out.read_text())
    assert report["judge_family"] == "openai" and report["mixed_pairs"] > 0
    assert "warning" not in report


def test_a_family_that_matches_nothing_is_refused_before_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sp.json"
    assert probe(out, "--judge-family", "acme") == 2
    err = capsys.readouterr().err
    assert "--judge-family acme" in err and "0 answers are matched" in err
    assert "anthropic, meta, openai" in err and ", ".join(FAMILY_NAMES) in err
    assert not out.exists()


def test_the_offline_rules_judge_is_told_it_needs_a_model_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's example on the default judge: the rules judge wrote none of the answers,
    so there is nothing to measure; one line says why and what to do, before any grading."""
    out = tmp_path / "sp.json"
    assert probe(out, "--human", str(REPO / "examples" / "human_pairs.csv")) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and "needs a model judge" in lines[0]
    assert "--judge-family" in lines[0] and "warning" not in err
    assert not out.exists()


def test_a_family_read_from_the_model_that_matches_nothing_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sp.json"
    # a model judge of a family no pair holds: the probe runs and says so
    with FakeOpenAIServer() as server:
        argv = ["--model", "mistral-large", "--base-url", server.base_url]
        assert probe(out, *argv) == 0
    assert "warning: self-preference" in capsys.readouterr().err
    report = json.loads(out.read_text())
    assert report["mixed_pairs"] == 0 and "0 answers are matched" in report["warning"]


def test_the_help_lists_the_family_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["probe", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "one of " + ", ".join(FAMILY_NAMES) in text


def test_judge_family_maps_names() -> None:
    assert judge_family("claude-3-5-sonnet-20241022", None) == "anthropic"
    assert judge_family(None, "meta-llama/Llama-3.1-70B") == "meta"
    assert judge_family(None, None) == "rules"
