"""The judge options of a jury job: each one reaches every juror, or is refused.

A juror's file names its model and key, and may give its endpoint, concurrency, rate caps
and sampling; every judge option the command line gives is the default of each juror for
what its file leaves out (`judge.jury.config.juror_config`), and the options that cannot
mean anything for a panel are refused here, by name. Nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from judge.app.judges import judge_config
from judge.errors import UsageError

if TYPE_CHECKING:
    from judge.app.requests import JudgeOptions
    from judge.config import JudgeConfig
    from judge.jury.config import Jury

# JudgeOptions field -> the flag: options a panel cannot take (each juror names its model)
REFUSED_WITH_JURY = {"model": "--model", "offline": "--offline"}
_PANEL = "jury"  # the base config's model: never asked, every juror names its own


def check_jury_judge_options(options: JudgeOptions) -> None:
    """A UsageError naming each judge option given that a jury cannot take."""
    given = [flag for name, flag in REFUSED_WITH_JURY.items() if getattr(options, name)]
    if given:
        raise UsageError(
            f"--jury does not combine with {', '.join(given)}: each juror names its own "
            "model in the jury file"
        )


def panel_configs(
    options: JudgeOptions, jury: Jury, env: Mapping[str, str]
) -> tuple[JudgeConfig, list[JudgeConfig]]:
    """The command line's judge config (every juror's defaults) and each juror's config."""
    from judge.jury.run import juror_configs  # the jury loads only when asked for

    check_jury_judge_options(options)
    # a model of its own, so that --base-url alone (a juror's default endpoint) does not
    # ask that endpoint which model it serves, as a single judge's would
    base = judge_config(replace(options, model=_PANEL), env)
    return base, juror_configs(jury, base, env)
