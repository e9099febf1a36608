"""The rubrics jobs: list, show and verify the rubrics (built-in and the user's folders:
`--rubrics-dir DIR`, repeatable, or `$JUDGE_RUBRICS_DIR`), start a new rubric file, and
lock a folder. `new` and `lock` come in two steps (a checked plan, then the write), so
that a caller can guard the file written in between."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judge.app.judging import rubric_library, user_rubric_dirs
from judge.errors import UsageError
from judge.kinds import get_kind, kind_names
from judge.rubric import DEFAULT_RUBRICS_DIR, Rubric, parse_ref, write_lock

__all__ = [
    "Listed",
    "RubricsRequest",
    "kind_names",
    "list_rubrics",
    "lock_folder",
    "new_rubric_path",
    "show_rubric",
    "verify_rubrics",
    "write_lock_of",
    "write_new_rubric",
]


@dataclass(frozen=True)
class RubricsRequest:
    """`judge rubrics [show | new | lock]`."""

    action: str
    ref: str | None
    kind: str | None
    rubrics_dir: tuple[Path, ...]


@dataclass(frozen=True)
class Listed:
    """One rubric in the list, and its folder when it is not a built-in one."""

    rubric: Rubric
    folder: Path | None


def show_rubric(request: RubricsRequest, env: Mapping[str, str]) -> tuple[Rubric, str]:
    """The rubric `ref` names, and its file's text."""
    library = rubric_library(request, env)
    if not request.ref:
        raise UsageError("judge rubrics show needs ID@VERSION, e.g. faithfulness@1")
    rubric = library.load(request.ref)
    return rubric, Path(rubric.path).read_text("utf-8")


def verify_rubrics(request: RubricsRequest, env: Mapping[str, str]) -> list[str]:
    """Each released file that differs from its lock, and each lock problem."""
    return list(rubric_library(request, env).verify())


def list_rubrics(request: RubricsRequest, env: Mapping[str, str]) -> tuple[list[Listed], list[str]]:
    """Every rubric, with the lock problems found on the way."""
    library = rubric_library(request, env)
    problems = list(library.verify())
    listed = []
    for rubric in library.rubrics():
        folder = library.folder_of(rubric.id)
        listed.append(Listed(rubric, None if folder == DEFAULT_RUBRICS_DIR else folder))
    return listed, problems


def _one_folder(request: RubricsRequest, env: Mapping[str, str], action: str) -> Path:
    folders = user_rubric_dirs(request, env)
    if len(folders) != 1:
        raise UsageError(
            f"judge rubrics {action} needs one folder of your own: --rubrics-dir DIR "
            f"(got {len(folders)}: {', '.join(map(str, folders)) or 'none'})"
        )
    return folders[0]


def new_rubric_path(request: RubricsRequest, env: Mapping[str, str]) -> Path:
    """The new rubric's first version file, checked: an id without a version, one folder
    of the user's, no rubric of that id anywhere."""
    if not request.ref or not request.kind:
        raise UsageError("judge rubrics new needs an ID and --kind, e.g. new tone --kind scale")
    rubric_id, version = parse_ref(request.ref)
    if version is not None:
        raise UsageError(f"judge rubrics new takes an id without a version, not {request.ref!r}")
    folder = _one_folder(request, env, "new")
    folder.mkdir(parents=True, exist_ok=True)
    owner = rubric_library(request, env).folder_of(rubric_id)
    if owner is not None or (folder / rubric_id).exists():
        raise UsageError(
            f"rubric {rubric_id!r} exists already in {owner or folder}; pick another id, or "
            "write a change as that rubric's next version file"
        )
    return folder / rubric_id / "v1.yaml"


def write_new_rubric(request: RubricsRequest, path: Path) -> None:
    """The kind's commented starting file, at the path `new_rubric_path` gave."""
    assert request.kind is not None  # new_rubric_path checked it
    path.parent.mkdir(exist_ok=True)  # the output's lock may have made it
    path.write_text(get_kind(request.kind).template(path.parent.name), "utf-8")


def lock_folder(request: RubricsRequest, env: Mapping[str, str]) -> Path:
    """The one folder to lock; its ids are checked against the built-in rubrics first."""
    folder = _one_folder(request, env, "lock")
    rubric_library(request, env)
    return folder


def write_lock_of(folder: Path) -> list[str]:
    """Write the folder's rubrics.lock; the rubric versions newly locked."""
    return write_lock(folder)
