"""`judge rubrics`: list, show, verify, start (`new`) and lock rubrics, built-in and the
user's own folders (`--rubrics-dir DIR`, repeatable, or `$JUDGE_RUBRICS_DIR`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.cli._common import (
    EXIT_OK,
    EXIT_USAGE,
    add_rubrics_dir_option,
    rubric_library,
    user_rubric_dirs,
)
from judge.cli._help import RUBRICS_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import RubricsRequest, request_from
from judge.errors import UsageError
from judge.kinds import get_kind, kind_names
from judge.rubric import DEFAULT_RUBRICS_DIR, parse_ref, write_lock

ACTIONS = ("list", "show", "verify", "new", "lock")


def add_rubrics(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rubrics",
        help="list, show, verify, start or lock rubrics (built-in and your own)",
        description="List the rubrics (built-in and your own folders'), show one, verify the "
        "released files against rubrics.lock, start a new rubric file, or lock a folder.",
        epilog=RUBRICS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=ACTIONS,
        default="list",
        help="list (the default); show ID@VERSION; verify every lock; new ID --kind K "
        "(a commented starting file in your folder); lock (write your folder's rubrics.lock)",
    )
    p.add_argument("ref", nargs="?", help="show: ID@VERSION; new: the new rubric's id")
    p.add_argument("--kind", choices=kind_names(), help="new: the rubric's kind")
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_rubrics)


def run_rubrics(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return rubrics_command(request_from(RubricsRequest, args), env)


def rubrics_command(request: RubricsRequest, env: Mapping[str, str]) -> int:
    """`judge rubrics [show | new | lock | verify]`, from its request."""
    if request.action == "new":
        return _new(request, env)
    if request.action == "lock":
        return _lock(request, env)
    library = rubric_library(request, env)
    if request.action == "show":
        if not request.ref:
            raise UsageError("judge rubrics show needs ID@VERSION, e.g. faithfulness@1")
        rubric = library.load(request.ref)
        print(f"# {rubric.ref}  kind={rubric.kind}  sha256={rubric.sha256}\n# {rubric.path}")
        print(Path(rubric.path).read_text("utf-8"), end="")
        return EXIT_OK
    problems = library.verify()
    if request.action == "verify":
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        if problems:
            return EXIT_USAGE
        print("rubrics.lock: all released rubrics match")
        return EXIT_OK
    rubrics = list(library.rubrics())
    wide = max([16, *(len(r.id) for r in rubrics)])  # columns as wide as the longest name
    kinds = max([13, *(len(r.kind) for r in rubrics)])
    print(f"{'rubric':<{wide}} {'version':>7}  {'kind':<{kinds}} sha256")
    for rubric in rubrics:
        folder = library.folder_of(rubric.id)
        where = "" if folder == DEFAULT_RUBRICS_DIR else f"  {folder}"
        print(
            f"{rubric.id:<{wide}} {rubric.version:>7}  {rubric.kind:<{kinds}} "
            f"{rubric.short_hash}{where}"
        )
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    return EXIT_OK


def _one_folder(request: RubricsRequest, env: Mapping[str, str], action: str) -> Path:
    folders = user_rubric_dirs(request, env)
    if len(folders) != 1:
        raise UsageError(
            f"judge rubrics {action} needs one folder of your own: --rubrics-dir DIR "
            f"(got {len(folders)}: {', '.join(map(str, folders)) or 'none'})"
        )
    return folders[0]


def _new(request: RubricsRequest, env: Mapping[str, str]) -> int:
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
    path = folder / rubric_id / "v1.yaml"
    check_outputs([Output("judge rubrics new", path, "rubric-version")], [], overwrite=None)
    path.parent.mkdir(exist_ok=True)  # the output's lock may have made it
    path.write_text(get_kind(request.kind).template(rubric_id), "utf-8")
    print(
        f"wrote {path}: edit it, try it (judge grade ... --rubrics-dir {folder} "
        f"--rubric {rubric_id}), then release it with judge rubrics lock --rubrics-dir {folder}"
    )
    return EXIT_OK


def _lock(request: RubricsRequest, env: Mapping[str, str]) -> int:
    folder = _one_folder(request, env, "lock")
    rubric_library(request, env)  # ids are checked against the built-in rubrics first
    lock = Output("judge rubrics lock", folder / "rubrics.lock", "rubric-lock")
    check_outputs([lock], [], overwrite=None)
    added = write_lock(folder)
    print(
        f"{folder / 'rubrics.lock'}: " + (f"locked {', '.join(added)}" if added else "nothing new")
    )
    return EXIT_OK
