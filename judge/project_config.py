"""The project's own defaults: `[tool.judge]` in pyproject.toml, or a judge.toml.

Every key is the default of a command-line flag (`model` of `--model`, `cache = false` of
`--no-cache`, ...): a flag given on the command line overrides it, and for the model and
the endpoint so do `$JUDGE_MODEL` and `$OPENAI_BASE_URL` (flag, then environment, then this
file, then the built-in default). List keys (`rubrics_dirs`, `fail_if`) add up: the file's,
then the flags'. Paths are relative to the file's folder, `~` expanded. The API key is never
read from here: only from `$OPENAI_API_KEY`.

The file is found from the working folder upwards: the first folder with a judge.toml, or a
pyproject.toml holding `[tool.judge]`; the search stops at the folder holding `.git` (the
project's root), and never climbs into a folder anyone may write to (`/tmp`: a file planted
there would redirect `base_url`, and with it the key and the cases). A file found is used
only when it is yours (or root's) and no one else can write to it; any other is refused,
saying why (exit 2), never read silently.

    [tool.judge]
    model = "gpt-4o-2024-08-06"
    base_url = "https://api.openai.com/v1"
    rubrics_dirs = ["rubrics"]
    concurrency = 32
    fail_if = ["mean_score < 0.8"]
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.config import Concurrency
from judge.errors import UsageError

JUDGE_TOML = "judge.toml"
PYPROJECT = "pyproject.toml"
SECRET_KEYS = frozenset({"api_key", "openai_api_key", "key"})


class ProjectSettings(BaseModel):
    """The keys of `[tool.judge]`, each the default of the flag named beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None  # --model
    base_url: str | None = None  # --base-url
    concurrency: Concurrency | None = None  # --concurrency: 1..1024, or "auto"
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)  # --temperature
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)  # --top-p
    seed: int | None = None  # --seed
    max_tokens: int | None = Field(default=None, ge=16, le=32768)  # --max-tokens
    timeout: float | None = Field(default=None, gt=0)  # --timeout
    max_retries: int | None = Field(default=None, ge=0, le=20)  # --max-retries
    output_mode: Literal["auto", "json_schema", "json_object", "prompt"] | None = None
    cache_dir: Path | None = None  # --cache-dir
    cache: bool | None = None  # false: --no-cache
    rubrics_dirs: list[Path] = Field(default_factory=list)  # --rubrics-dir, each
    fail_if: list[str] = Field(default_factory=list)  # --fail-if, each
    max_error_rate: float | None = Field(default=None, ge=0.0, le=1.0)  # --max-error-rate
    price_input: float | None = Field(default=None, ge=0.0, lt=1e6)  # --price-input
    price_output: float | None = Field(default=None, ge=0.0, lt=1e6)  # --price-output
    # [tool.judge.traces]: where a case's fields are in a trace (judge.traces.mapping)
    traces: dict[str, str | list[str]] | None = None


# key -> (the argparse dest it sets, how the file's value becomes that dest's value)
DESTS: dict[str, tuple[str, Any]] = {
    "cache": ("no_cache", lambda v: not v),
    "rubrics_dirs": ("rubrics_dir", list),
}
# Keys whose environment variable outranks the file: kept apart, read by config_from_args.
BELOW_ENV = {"model": "JUDGE_MODEL", "base_url": "OPENAI_BASE_URL"}


@dataclass(frozen=True)
class ProjectConfig:
    """The settings one file gives (`path` None: no file found), and the flag defaults
    they make."""

    path: Path | None = None
    settings: ProjectSettings = field(default_factory=ProjectSettings)

    def given(self) -> dict[str, Any]:
        """The keys the file sets, with their values."""
        return self.settings.model_dump(exclude_unset=True)

    def defaults(self) -> dict[str, Any]:
        """argparse defaults (dest -> value) the file's keys make; the model and endpoint
        go to `project_model` / `project_base_url`, which rank below the environment.

        >>> ProjectConfig(None, ProjectSettings(cache=False, model="m")).defaults()
        {'project_model': 'm', 'no_cache': True}
        """
        out: dict[str, Any] = {}
        for key, value in self.given().items():
            if key in BELOW_ENV:
                out[f"project_{key}"] = value
                continue
            dest, convert = DESTS.get(key, (key, None))
            out[dest] = convert(value) if convert else value
        return out

    @property
    def label(self) -> str:
        """Where the settings come from, as `judge config` names it."""
        if self.path is None:
            return "default"
        return f"{self.path} [tool.judge]" if self.path.name == PYPROJECT else str(self.path)


def find_project_file(start: Path | None = None) -> Path | None:
    """The nearest judge.toml, or pyproject.toml with `[tool.judge]`, from `start` (the
    working folder) upwards; the search ends at the folder holding `.git`, and below a
    folder that others may write to (a sticky `/tmp`: not a project, a shared space)."""
    folder = (start or Path.cwd()).resolve()
    for here in (folder, *folder.parents):
        if here != folder and _shared_folder(here):
            return None
        if (here / JUDGE_TOML).is_file():
            return here / JUDGE_TOML
        pyproject = here / PYPROJECT
        if pyproject.is_file() and "judge" in _tool_table(_read_toml(pyproject)):
            return pyproject
        if (here / ".git").exists():
            return None
    return None


def load_project_config(start: Path | None = None) -> ProjectConfig:
    """The project's settings (none when no file is found); UsageError naming the file
    and key for a bad value, an unknown key or an API key written in the file, and for a
    file someone else owns or can write to."""
    path = find_project_file(start)
    if path is None:
        return ProjectConfig()
    data = _read_toml(path, trusted=True)
    table = _tool_table(data).get("judge", {}) if path.name == PYPROJECT else data
    return ProjectConfig(path, parse_settings(table, path))


def parse_settings(table: Mapping[str, Any], path: Path) -> ProjectSettings:
    """The settings of one `[tool.judge]` table (or judge.toml), paths resolved against
    the file's folder."""
    if not isinstance(table, Mapping):
        raise UsageError(f"{path}: [tool.judge] must be a table")
    secrets = sorted(SECRET_KEYS & set(table))
    if secrets:
        raise UsageError(
            f"{path}: {secrets[0]}: an API key is never read from a file; "
            "set $OPENAI_API_KEY in the environment"
        )
    try:
        settings = ProjectSettings.model_validate(dict(table))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: "
            f"{'unknown key' if e['type'] == 'extra_forbidden' else e['msg'].lower()}"
            for e in exc.errors()
        )
        raise UsageError(f"{path}: {problems}") from None
    base = path.parent
    updates: dict[str, Any] = {}
    if settings.cache_dir is not None:
        updates["cache_dir"] = _under(base, settings.cache_dir)
    if "rubrics_dirs" in settings.model_fields_set:
        updates["rubrics_dirs"] = [_under(base, p) for p in settings.rubrics_dirs]
    return settings.model_copy(update=updates) if updates else settings


def _under(base: Path, path: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else base / path


def _tool_table(data: dict[str, Any]) -> dict[str, Any]:
    tool = data.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def _shared_folder(folder: Path) -> bool:
    """Whether anyone may create files in `folder` (world-writable, as /tmp is)."""
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return True  # a folder that cannot be looked at is not the project's


def untrusted_reason(info: os.stat_result) -> str | None:
    """Why a config file with this status is not to be read, or None: it must be owned by
    the user running judge (or root) and writable by its owner alone."""
    me = os.geteuid()
    if info.st_uid not in (me, 0):
        return f"it is owned by uid {info.st_uid}, not by you (uid {me})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "anyone" if info.st_mode & stat.S_IWOTH else "its group"
        return f"{who} can write to it (mode {stat.filemode(info.st_mode)}; chmod go-w fixes it)"
    return None


def _read_toml(path: Path, *, trusted: bool = False) -> dict[str, Any]:
    """The file's TOML; with `trusted`, checked (on the handle read, so it cannot be
    swapped in between) to be the user's own and writable by no one else."""
    try:
        with path.open("rb") as handle:
            reason = untrusted_reason(os.fstat(handle.fileno())) if trusted else None
            if reason is not None:
                raise UsageError(
                    f"{path}: refused as a project config: {reason}; it could redirect the "
                    "judge (and your key) elsewhere. Remove it, or run where the project's "
                    "own .git or judge.toml is found first"
                )
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once a nesting level
        raise UsageError(f"{path}: not valid TOML (a value nested too deeply to read)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror})") from None
