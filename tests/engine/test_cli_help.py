"""The front door: `judge --version`, help on every option, examples on every subcommand,
and the `--fail-if` metric names the probe help lists."""

from __future__ import annotations

import argparse
import importlib
import json
from importlib.metadata import version
from pathlib import Path

import pytest

from judge.cli import COMMANDS, build_parser, main
from judge.cli._help import FAIL_IF_METRICS
from judge.cli._parser import command_parsers
from judge.rubric import DEFAULT_RUBRICS_DIR, LOCK_NAME, file_sha256
from tests.helpers import REPO

PARSERS = command_parsers(build_parser())


def test_version_names_the_package_and_the_rubric_lock(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    lock = file_sha256(DEFAULT_RUBRICS_DIR / LOCK_NAME)
    assert capsys.readouterr().out == (
        f"judge {version('llm-judge')} (rubrics.lock sha256 {lock[:12]})\n"
    )


def test_top_level_help_lists_every_command_with_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    flat = " ".join(text.split())  # argparse wraps the command lines to the terminal
    assert "Grade RAG answers with a pinned LLM judge" in text
    for name, (summary, _) in COMMANDS.items():
        assert f"{name} {summary}" in flat, name
    assert "examples:\n  judge grade examples/cases.jsonl" in text


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_command_table_repeats_what_each_command_says_of_itself(name: str) -> None:
    summary, target = COMMANDS[name]
    module, _, function = target.partition(":")
    sub = argparse.ArgumentParser().add_subparsers()
    getattr(importlib.import_module(module), function)(sub)
    assert [(a.dest, a.help) for a in sub._choices_actions] == [(name, summary)]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_says_what_it_does(name: str) -> None:
    silent = []
    for action in PARSERS[name]._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        if not (action.help or "").strip():
            silent.append(action.option_strings or action.dest)
    assert silent == [], f"judge {name}: no help for {silent}"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_examples_laid_out_as_written(name: str) -> None:
    parser = PARSERS[name]
    assert parser.formatter_class is argparse.RawDescriptionHelpFormatter
    assert (parser.epilog or "").startswith("examples:") or "\nexamples:\n" in parser.epilog
    assert f"  judge {name} " in parser.format_help()


def test_probe_help_lists_the_fail_if_metrics() -> None:
    text = PARSERS["probe"].format_help()
    for probe, names in FAIL_IF_METRICS.items():
        assert f"  {probe}:" in text
        for metric in names:
            assert metric in text, metric


RUNS = {  # FAIL_IF_METRICS key -> probe, input, rubric
    "position": ("position", "pairs.jsonl", "pairwise"),
    "verbosity": ("verbosity", "cases.jsonl", "faithfulness"),
    "verbosity, pairwise": ("verbosity", "pairs.jsonl", "pairwise"),
    "repeat": ("repeat", "pairs.jsonl", "pairwise"),
    "injection": ("injection", "pairs.jsonl", "pairwise"),
    "self-preference": ("self-preference", "pairs.jsonl", "pairwise"),
}


@pytest.mark.parametrize("key", list(FAIL_IF_METRICS))
def test_listed_metrics_are_in_the_probe_report(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probe, source, rubric = RUNS[key]
    out = tmp_path / "report.json"
    args = ["probe", probe, str(REPO / "examples" / source), "--rubric", rubric, "-o", str(out)]
    if probe == "self-preference":  # the offline judge measures a family it is told
        args += ["--judge-family", "openai"]
    assert main([*args, "--offline"], env={}) == 0, capsys.readouterr().err
    report = json.loads(out.read_text("utf-8"))
    for metric in FAIL_IF_METRICS[key]:
        assert metric in report, metric
        assert report[metric] is None or isinstance(report[metric], int | float), metric
