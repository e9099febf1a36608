"""The `judge` command: its parser, whose subcommands load only when chosen
(`judge.cli._parser`), and `main`, which turns the project's errors into exit codes."""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
from collections.abc import Mapping

from judge.app.logs import cli_redactor, redact_logs
from judge.app.session import command_run, no_space_line, version_text
from judge.cli._common import EXIT_FATAL, EXIT_USAGE
from judge.cli._help import DESCRIPTION, EPILOG
from judge.cli._parser import LazyCommands, VersionAction
from judge.config import endpoint_of
from judge.errors import ApiError, InputError, JudgeError, RubricError, UsageError

__all__ = ["COMMANDS", "build_parser", "main", "version_text"]

# Each subcommand: the function of judge.cli.NAME that adds its options (the module is
# imported only when the subcommand is chosen: judge/cli/_parser.py), then its line in
# `judge --help` (the help that function gives add_parser; a test keeps them equal).
_TABLE = """\
grade add_grade grade an answer set (JSONL or CSV) with one rubric or several
rubrics add_rubrics list, show, verify, start or lock rubrics (built-in and your own)
probe add_probe_command measure a judge's biases (position, verbosity, ...)
calibrate add_calibrate agreement of a judge's labels with human labels
gate add_gate a candidate judge against the baseline on human labels
drift add_drift agreement with people window by window; exit 3 when it drops
certify add_certify a certified confidence threshold per judge of a cascade, from human labels
compare add_compare compare systems graded on the same cases, metric by metric
align add_align next rubric version with examples from labelled disagreements (dev split)
batch add_batch_command status of Batch API runs; fetch one whose process ended
serve add_serve run the grading service (HTTP API, jobs, OpenAPI at /docs)
label add_label_command label cases blind in the browser; `judge label export` writes the CSV
traces add_traces traces in (OTLP JSON, Phoenix) as cases; verdicts out as Phoenix annotations
watch add_watch grade live traffic from traces: sampled, on a budget, resumable
view add_view browse runs, records, comparisons and calibrations in the browser
config add_config the effective settings ([tool.judge] / judge.toml, flags, environment)
"""
COMMANDS: dict[str, tuple[str, str]] = {
    name: (summary, f"judge.cli.{name}:{function}")
    for name, function, summary in (row.split(" ", 2) for row in _TABLE.splitlines())
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judge",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument(
        "-V",
        "--version",
        action=VersionAction,
        default=version_text,
        help="print the version and the rubric lock's hash",
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", action=LazyCommands
    )
    assert isinstance(sub, LazyCommands)
    for name, (summary, target) in COMMANDS.items():
        sub.add_lazy(name, summary, target)
    return parser


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    if not argv:  # bare `judge`: the commands, not only "COMMAND is required"
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    redact_logs(cli_redactor(env, getattr(args, "base_url", None)))
    try:
        with command_run():  # every output a command checks stays locked until it ends
            code = int(args.run(args, env))
        sys.stdout.flush()  # a closed pipe fails here, inside the handlers, not at exit
        return code
    except (JudgeError, OSError, KeyboardInterrupt) as exc:
        return _failed(exc, args, argv, env)


def _failed(
    exc: BaseException, args: argparse.Namespace, argv: list[str], env: Mapping[str, str]
) -> int:
    """The exit code of a command that raised, its one line said on stderr. Called in the
    `except` block, so a bare `raise` passes on an OSError no line can say."""
    if isinstance(exc, InputError | RubricError | UsageError):
        print(f"error: {exc}", file=sys.stderr)
        rerun = getattr(exc, "rerun", None)  # OutputConflictError: the flag that goes through
        if rerun and rerun not in argv:
            print(f"judge: to run it: judge {shlex.join([*argv, rerun])}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, ApiError):
        url = getattr(args, "base_url", None) or env.get("OPENAI_BASE_URL")
        where = exc.endpoint or endpoint_of(url)
        failed = f"the judge endpoint {where} failed, nothing more was sent"
        print(f"error: {failed}: {exc}", file=sys.stderr)
        return EXIT_FATAL
    if isinstance(exc, JudgeError):
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FATAL
    if isinstance(exc, BrokenPipeError):  # `judge rubrics show ... | head`: the reader has gone
        _quiet_stdout()
        print("judge: the output was closed before it ended (broken pipe)", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        print("interrupted: records written so far are kept; run again to resume", file=sys.stderr)
        return 130
    line = no_space_line(exc) if isinstance(exc, OSError) else None
    if line is None:
        raise  # the OSError main is handling (this runs in its except block)
    print(line, file=sys.stderr)
    return EXIT_FATAL


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is not a real file (a test's capture): nothing will flush there
    finally:
        os.close(devnull)
