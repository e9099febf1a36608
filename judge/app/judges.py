"""Which judge and which rubrics a job runs with: the judge options (a request's `judge`)
and the environment, read at the edge, made into the frozen `JudgeConfig`; the rubric
library of the built-in rubrics and the user's folders.

The same reading as `judge.cli._common.config_from_args` (which the CLI's other commands
still call): flag, then environment, then the project file; `--base-url` alone asks the
endpoint which one model it serves (the client loads only then)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import SecretStr, ValidationError

from judge.app.edge import note
from judge.config import JudgeConfig, default_cache_dir, endpoint_of
from judge.errors import UsageError
from judge.rubric import RubricLibrary

if TYPE_CHECKING:
    from judge.app.requests import JudgeOptions

MAX_LISTED_MODELS = 20


class RubricFolders(Protocol):
    """A request that takes `--rubrics-dir` (grade, probe, align, compare, ...)."""

    @property
    def rubrics_dir(self) -> Sequence[Path]: ...


def rubric_library(request: RubricFolders, env: Mapping[str, str]) -> RubricLibrary:
    """The built-in rubrics, the request's folders, then `$JUDGE_RUBRICS_DIR`'s."""
    listed = [Path(p) for p in env.get("JUDGE_RUBRICS_DIR", "").split(os.pathsep) if p]
    return RubricLibrary([*request.rubrics_dir, *listed])


def api_key_from(env: Mapping[str, str]) -> SecretStr | None:
    """`$OPENAI_API_KEY`, the one place a job reads a key (a secret from then on)."""
    key = env.get("OPENAI_API_KEY")
    return SecretStr(key) if key else None


def judge_config(options: JudgeOptions, env: Mapping[str, str]) -> JudgeConfig:
    """The frozen config from the judge options, falling back to the environment."""
    project_url = options.project_base_url
    model = (
        None
        if options.offline
        else (options.model or env.get("JUDGE_MODEL") or options.project_model)
    )
    try:
        config = JudgeConfig(
            model=model,
            base_url=options.base_url or env.get("OPENAI_BASE_URL") or project_url,
            api_key=api_key_from(env),
            temperature=options.temperature,
            top_p=options.top_p,
            seed=options.seed,
            max_tokens=options.max_tokens,
            timeout=options.timeout,
            max_retries=options.max_retries,
            output_mode=options.output_mode,
            concurrency=options.concurrency,
            rpm=options.rpm,
            tpm=options.tpm,
            cache_dir=options.cache_dir or default_cache_dir(env),
            use_cache=not options.no_cache,
        )
    except ValidationError as exc:
        problems = "; ".join(f"--{'-'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(problems.replace("_", "-")) from None
    if config.offline and (options.base_url or project_url) and not options.offline:
        # --base-url alone: the endpoint's one model, never a silent fall back to rules
        config = config.model_copy(update={"model": discover_model(config)})
    return config


def discover_model(config: JudgeConfig) -> str:
    """The one model `--base-url` serves; UsageError listing them when it serves several
    or none."""
    from judge.client import served_models  # the HTTP client loads only when asked

    models = served_models(config)
    where = endpoint_of(config.base_url)  # never the user name or password of the URL
    if len(models) == 1:
        note(f"judge: {where} serves one model: grading with {models[0]!r}")
        return models[0]
    if not models:
        raise UsageError(f"--base-url {where} lists no model at /models; pass --model")
    shown = ", ".join(models[:MAX_LISTED_MODELS])
    more = f" and {len(models) - MAX_LISTED_MODELS} more" if len(models) > MAX_LISTED_MODELS else ""
    raise UsageError(
        f"--base-url {where} serves {len(models)} models ({shown}{more}); pick one with --model"
    )
