"""Every judge option of `grade` and `probe` reaches every juror, or is refused with
`--jury` naming it; none is silently dropped (issue 37). The options are enumerated from
the parsers, so a new one is covered the day it is added. The service's named juries take
their judge's options the same way. Through the loopback server: a two-juror jury run with
`--max-tokens N` sends `max_tokens: N` to both jurors."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.cli import main
from judge.cli._common import config_from_args
from judge.cli._jury_options import panel_configs
from judge.cli._main import build_parser
from judge.cli._parser import command_parsers
from judge.cli._requests import JudgeOptions, request_from
from judge.config import JudgeConfig
from judge.errors import UsageError
from judge.jury.config import load_jury
from judge.service.config import load_service_config
from judge.testing import FakeOpenAIServer
from judge.testing.server import FaultPlan

ENV = {"JUDGE_MODEL": "single-2024-01-01"}
OWN = {"base_url": "http://127.0.0.1:9/v1", "max_tokens": 64, "concurrency": 3}


def judge_actions(command: str) -> list[argparse.Action]:
    """The options of the parser's "judge" group (add_judge_options), as argparse has them."""
    parser = command_parsers(build_parser())[command]
    group = next(g for g in parser._action_groups if g.title == "judge")
    return [a for a in group._group_actions if a.option_strings]


def other_value(action: argparse.Action, tmp_path: Path) -> list[str]:
    """The arguments giving `action` a valid value other than its default."""
    flag = action.option_strings[-1]
    if action.nargs == 0:
        return [flag]
    if action.choices:
        return [flag, next(str(c) for c in action.choices if c != action.default)]
    if action.type is float:
        return [flag, "0.5"]
    if action.type is Path:
        return [flag, str(tmp_path / "elsewhere")]
    if action.type is None:  # text
        return [flag, "http://127.0.0.1:8/v1" if "url" in flag else "other-model"]
    default = action.default if isinstance(action.default, int) else 16
    return [flag, str(default + 1)]  # int, and --concurrency's own type


def write_jury(path: Path) -> Path:
    jurors = [
        {"name": "plain", "model": "a-2024-01-01"},  # the file gives nothing: all defaults
        {"name": "own", "model": "b-2024-01-01", "sampling": {"max_tokens": 64}, **OWN},
    ]
    jurors[1].pop("max_tokens")
    path.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
    return path


def options(command: str, extra: list[str], tmp_path: Path) -> JudgeOptions:
    head = ["probe", "repeat"] if command == "probe" else ["grade"]
    args = build_parser().parse_args([*head, "cases.jsonl", "--rubric", "relevance", *extra])
    return request_from(JudgeOptions, args)


def changed(config: JudgeConfig, default: JudgeConfig) -> dict[str, Any]:
    return {
        name: getattr(config, name)
        for name in JudgeConfig.model_fields
        if getattr(config, name) != getattr(default, name)
    }


@pytest.mark.parametrize("command", ["grade", "probe"])
def test_every_judge_option_reaches_every_juror_or_is_refused(command: str, tmp_path: Path) -> None:
    jury = load_jury(write_jury(tmp_path / "jury.yaml"))
    default = config_from_args(options(command, [], tmp_path), ENV)
    actions = judge_actions(command)
    assert len(actions) >= 14  # the group as it is today; more is fine
    for action in actions:
        extra = other_value(action, tmp_path)
        given = options(command, extra, tmp_path)
        wanted = changed(config_from_args(given, ENV), default)
        assert wanted, f"{extra} changes nothing in a single judge's config"
        try:
            _, configs = panel_configs(given, jury, ENV)
        except UsageError as exc:
            assert extra[0] in str(exc), (extra, str(exc))
            continue
        for juror, config in zip(jury.jurors, configs, strict=True):
            own = OWN if juror.name == "own" else {}
            for name, value in wanted.items():
                expected = own.get(name, value)
                assert getattr(config, name) == expected, (extra, juror.name, name)


def test_the_jury_file_wins_over_a_flag(tmp_path: Path) -> None:
    jury = load_jury(write_jury(tmp_path / "jury.yaml"))
    given = options("grade", ["--max-tokens", "96", "--concurrency", "5"], tmp_path)
    _, (plain, own) = panel_configs(given, jury, ENV)
    assert (plain.max_tokens, plain.concurrency) == (96, 5)
    assert (own.max_tokens, own.concurrency) == (64, 3)


def test_model_and_offline_are_refused_by_name(tmp_path: Path) -> None:
    jury = load_jury(write_jury(tmp_path / "jury.yaml"))
    given = options("grade", ["--model", "m", "--offline"], tmp_path)
    with pytest.raises(UsageError, match="--model, --offline"):
        panel_configs(given, jury, ENV)
    # $JUDGE_MODEL is not a flag: a jury run in a shell that sets it is not refused
    panel_configs(replace(given, model=None, offline=False), jury, ENV)


def test_a_served_jury_takes_its_judges_options(tmp_path: Path) -> None:
    jury = write_jury(tmp_path / "jury.yaml")
    path = tmp_path / "service.yaml"
    spec = {"jury": jury.name, "max_tokens": 96, "temperature": 0.3, "seed": 7, "timeout": 9.0}
    path.write_text(yaml.safe_dump({"judges": {"panel": spec}}), "utf-8")
    config = load_service_config(path, {})
    plain, own = config.juror_configs["panel"]
    assert (plain.max_tokens, plain.temperature, plain.seed, plain.timeout) == (96, 0.3, 7, 9.0)
    assert (own.max_tokens, own.temperature, own.timeout) == (64, 0.3, 9.0)


def test_max_tokens_reaches_both_jurors_on_the_wire(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    case = {"question": "What is the refund window?", "answer": "30 days.", "contexts": ["x"]}
    cases.write_text("".join(json.dumps({"id": f"c{i}", **case}) + "\n" for i in range(2)))
    plan = FaultPlan(rate_truncated=1.0)  # every reply cut off: "length"
    with FakeOpenAIServer(faults=plan) as a, FakeOpenAIServer(faults=plan) as b:
        jurors = [
            {"name": n, "model": f"{n}-2024-01-01", "base_url": s.base_url}
            for n, s in (("a", a), ("b", b))
        ]
        jury = tmp_path / "jury.yaml"
        jury.write_text(yaml.safe_dump({"jurors": jurors}), "utf-8")
        args = ["grade", str(cases), "--rubric", "relevance", "--jury", str(jury)]
        args += ["-o", str(tmp_path / "out"), "--max-tokens", "24"]
        env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-test"}
        assert main(args, env=env) == 1  # nothing parsed: the run failed
        for server in (a, b):
            sent = [body["max_tokens"] for body in server.stats.bodies]
            assert sent == [24, 24]
