"""`judge rubrics`: list, show, verify, start (`new`) and lock rubrics, built-in and the
user's own folders (`--rubrics-dir DIR`, repeatable, or `$JUDGE_RUBRICS_DIR`). Parsing and
printing only; the jobs are judge.app.rubrics'."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from judge.app import rubrics as jobs
from judge.cli._common import EXIT_OK, EXIT_USAGE, add_rubrics_dir_option
from judge.cli._help import RUBRICS_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import request_from

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
    p.add_argument("--kind", choices=jobs.kind_names(), help="new: the rubric's kind")
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_rubrics)


def run_rubrics(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`judge rubrics [show | new | lock | verify]`."""
    request = request_from(jobs.RubricsRequest, args)
    if request.action == "new":
        path = jobs.new_rubric_path(request, env)
        check_outputs([Output("judge rubrics new", path, "rubric-version")], [], overwrite=None)
        jobs.write_new_rubric(request, path)
        folder, rubric_id = path.parent.parent, path.parent.name
        print(
            f"wrote {path}: edit it, try it (judge grade ... --rubrics-dir {folder} "
            f"--rubric {rubric_id}), then release it with judge rubrics lock --rubrics-dir {folder}"
        )
    elif request.action == "lock":
        folder = jobs.lock_folder(request, env)
        lock = Output("judge rubrics lock", folder / "rubrics.lock", "rubric-lock")
        check_outputs([lock], [], overwrite=None)
        added = jobs.write_lock_of(folder)
        done = f"locked {', '.join(added)}" if added else "nothing new"
        print(f"{folder / 'rubrics.lock'}: {done}")
    elif request.action == "show":
        rubric, text = jobs.show_rubric(request, env)
        print(f"# {rubric.ref}  kind={rubric.kind}  sha256={rubric.sha256}\n# {rubric.path}")
        print(text, end="")
    else:
        return _listed(request, env)
    return EXIT_OK


def _listed(request: jobs.RubricsRequest, env: Mapping[str, str]) -> int:
    """`list` (a table, lock problems as warnings) or `verify` (exit 2 on a problem)."""
    if request.action == "verify":
        problems = jobs.verify_rubrics(request, env)
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        if problems:
            return EXIT_USAGE
        print("rubrics.lock: all released rubrics match")
        return EXIT_OK
    listed, problems = jobs.list_rubrics(request, env)
    wide = max([16, *(len(r.rubric.id) for r in listed)])  # columns as wide as the longest
    kinds = max([13, *(len(r.rubric.kind) for r in listed)])
    print(f"{'rubric':<{wide}} {'version':>7}  {'kind':<{kinds}} sha256")
    for r in listed:
        where = f"  {r.folder}" if r.folder else ""
        rubric = r.rubric
        line = (
            f"{rubric.id:<{wide}} {rubric.version:>7}  {rubric.kind:<{kinds}} {rubric.short_hash}"
        )
        print(line + where)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    return EXIT_OK
