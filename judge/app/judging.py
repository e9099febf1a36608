"""Which judge a job runs, and with which rubrics: the frozen `JudgeConfig` built from a
request's judge options and the environment (read once, at the edge), the endpoint's one
model when only `--base-url` names it, a jury's juror configs, and the rubric library of
the built-in and the user's folders. Shared by every job that grades; nothing here prints:
what a person should be told goes to `say`, one line each."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import SecretStr, ValidationError

from judge.config import JudgeConfig, OutputMode, default_cache_dir, endpoint_of
from judge.errors import UsageError
from judge.rubric import RubricLibrary

if TYPE_CHECKING:
    from judge.jury.config import Jury

Say = Callable[[str], None]
MAX_LISTED_MODELS = 20
OFFLINE_NOTE = (
    "judge: no model configured: grading with the offline rules judge (deterministic, no network)"
)
# JudgeOptions field -> the flag: options a panel cannot take (each juror names its model)
REFUSED_WITH_JURY = {"model": "--model", "offline": "--offline"}
_PANEL = "jury"  # the base config's model: never asked, every juror names its own


class JudgeChoice(Protocol):
    """A request's judge options (`judge.cli._requests.JudgeOptions` is one)."""

    @property
    def model(self) -> str | None: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def offline(self) -> bool: ...
    @property
    def concurrency(self) -> int | Literal["auto"]: ...
    @property
    def rpm(self) -> int | None: ...
    @property
    def tpm(self) -> int | None: ...
    @property
    def temperature(self) -> float: ...
    @property
    def top_p(self) -> float | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def output_mode(self) -> OutputMode: ...
    @property
    def cache_dir(self) -> Path | None: ...
    @property
    def no_cache(self) -> bool: ...
    @property
    def project_model(self) -> str | None: ...
    @property
    def project_base_url(self) -> str | None: ...


class RubricFolders(Protocol):
    """A request that takes `--rubrics-dir` (grade, probe, align, compare, ...)."""

    @property
    def rubrics_dir(self) -> Sequence[Path]: ...


def _silent(line: str) -> None:
    """The default `say`: a caller that wants no notes."""


def api_key_from(env: Mapping[str, str]) -> SecretStr | None:
    """`$OPENAI_API_KEY`, the one place a key is read (a secret from then on)."""
    key = env.get("OPENAI_API_KEY")
    return SecretStr(key) if key else None


def judge_config(
    options: JudgeChoice, env: Mapping[str, str], *, say: Say = _silent
) -> JudgeConfig:
    """The frozen config from the judge options, falling back to the environment, then to
    the project file ([tool.judge]: judge.project_config)."""
    project_url = options.project_base_url
    model = None
    if not options.offline:
        model = options.model or env.get("JUDGE_MODEL") or options.project_model
    try:
        config = JudgeConfig(
            model=model,
            base_url=options.base_url or env.get("OPENAI_BASE_URL") or project_url,
            api_key=api_key_from(env),
            **_sampling(options),
            cache_dir=options.cache_dir or default_cache_dir(env),
            use_cache=not options.no_cache,
        )
    except ValidationError as exc:
        problems = "; ".join(f"--{'-'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(problems.replace("_", "-")) from None
    if config.offline and (options.base_url or project_url) and not options.offline:
        # --base-url alone: the endpoint's one model, never a silent fall back to rules
        config = config.model_copy(update={"model": discover_model(config, say=say)})
    return config


def _sampling(options: JudgeChoice) -> dict[str, Any]:
    names = ("temperature", "top_p", "seed", "max_tokens", "timeout", "max_retries")
    pacing = ("output_mode", "concurrency", "rpm", "tpm")
    values = {name: getattr(options, name) for name in (*names, *pacing)}
    return {**values, "samples": getattr(options, "samples", 1)}


def discover_model(config: JudgeConfig, *, say: Say = _silent) -> str:
    """The one model `--base-url` serves; UsageError listing them when it serves several
    or none."""
    from judge.client import served_models  # the HTTP client loads only when asked

    models = served_models(config)
    where = endpoint_of(config.base_url)  # never the user name or password of the URL
    if len(models) == 1:
        say(f"judge: {where} serves one model: grading with {models[0]!r}")
        return models[0]
    if not models:
        raise UsageError(f"--base-url {where} lists no model at /models; pass --model")
    shown = ", ".join(models[:MAX_LISTED_MODELS])
    more = f" and {len(models) - MAX_LISTED_MODELS} more" if len(models) > MAX_LISTED_MODELS else ""
    raise UsageError(
        f"--base-url {where} serves {len(models)} models ({shown}{more}); pick one with --model"
    )


def judge_notes(config: JudgeConfig) -> list[str]:
    """What a person is told about the judge that runs: the offline rules judge, or a
    model whose verdicts may drift (an unpinned alias: `JudgeConfig.may_drift`)."""
    if config.offline:
        return [OFFLINE_NOTE]
    if config.may_drift:
        return [
            f"judge: warning: model {config.model!r} is not pinned to a dated snapshot; "
            "its verdicts may drift when the provider updates it"
        ]
    return []


def check_jury_judge_options(options: JudgeChoice) -> None:
    """A UsageError naming each judge option given that a jury cannot take."""
    given = [flag for name, flag in REFUSED_WITH_JURY.items() if getattr(options, name)]
    if given:
        raise UsageError(
            f"--jury does not combine with {', '.join(given)}: each juror names its own "
            "model in the jury file"
        )


def panel_configs(
    options: JudgeChoice, jury: Jury, env: Mapping[str, str]
) -> tuple[JudgeConfig, list[JudgeConfig]]:
    """The command line's judge config (every juror's defaults) and each juror's config."""
    from judge.jury.run import juror_configs  # the jury loads only when asked for

    check_jury_judge_options(options)
    # a model of its own, so that --base-url alone (a juror's default endpoint) does not
    # ask that endpoint which model it serves, as a single judge's would
    base = judge_config(replace(options, model=_PANEL), env)  # type: ignore[type-var]
    return base, juror_configs(jury, base, env)


def user_rubric_dirs(request: RubricFolders, env: Mapping[str, str]) -> list[Path]:
    """The user's rubric folders: `--rubrics-dir` ones, then `$JUDGE_RUBRICS_DIR`'s."""
    listed = [Path(p) for p in env.get("JUDGE_RUBRICS_DIR", "").split(os.pathsep) if p]
    return [*request.rubrics_dir, *listed]


def rubric_library(request: RubricFolders, env: Mapping[str, str]) -> RubricLibrary:
    """The built-in rubrics and the user's folders (read at the edge, once)."""
    return RubricLibrary(user_rubric_dirs(request, env))
