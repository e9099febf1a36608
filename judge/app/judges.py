"""The grade path's judge reading: `judge.app.judging`'s, with its notes told through the
job's edge (`judge.app.edge.note`) rather than a `say` callback. One implementation:
flag, then environment, then the project file; `--base-url` alone asks the endpoint which
one model it serves (the client loads only then)."""

from __future__ import annotations

from collections.abc import Mapping

from judge.app import judging
from judge.app.edge import note
from judge.app.judging import RubricFolders, api_key_from, rubric_library
from judge.config import JudgeConfig

__all__ = ["RubricFolders", "api_key_from", "discover_model", "judge_config", "rubric_library"]


def judge_config(options: judging.JudgeChoice, env: Mapping[str, str]) -> JudgeConfig:
    """The frozen config from the judge options, falling back to the environment."""
    return judging.judge_config(options, env, say=note)


def discover_model(config: JudgeConfig) -> str:
    """The one model `--base-url` serves; UsageError listing them when it serves several
    or none."""
    return judging.discover_model(config, say=note)
