"""`judge` command line: argument parsing and printing only; the work is in judge.app.

Start-up stays light: a subcommand's module, and the libraries behind it (the HTTP client,
scipy, scikit-learn, matplotlib, FastAPI), load only when that subcommand runs
(judge/cli/_parser.py); `judge --help`, `--version` and `rubrics` load none of them. What
the help says to users is in judge/cli/_help.py. The judge options become a config in
judge.app.judging; the names here are the commands' shared options and printing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from judge.app.judging import (
    MAX_LISTED_MODELS,
    OFFLINE_NOTE,
    RubricFolders,
    api_key_from,
    discover_model,
    judge_config,
    judge_notes,
    rubric_library,
    user_rubric_dirs,
)
from judge.app.summary import rules_judge_notes, summary_view
from judge.cli._cascade_print import cascade_lines
from judge.cli._labels import print_estimates
from judge.config import JudgeConfig, JudgeSettings, OutputMode

if TYPE_CHECKING:
    from judge.app.judging import JudgeChoice

__all__ = [
    "EXIT_FATAL", "EXIT_GATE", "EXIT_OK", "EXIT_USAGE", "MAX_LISTED_MODELS", "OFFLINE_NOTE",
    "RubricFolders", "add_judge_options", "add_rubrics_dir_option", "announce_judge",
    "api_key_from", "concurrency_option", "config_from_args", "discover_model", "print_summary",
    "rubric_library", "rules_judge_notes", "say", "say_requests", "show_progress",
    "user_rubric_dirs",
]  # fmt: skip

EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3
EXIT_TOO_FEW = 4  # too few labels to tell (judge drift): neither a failed run nor a gate
# The judge options' defaults are JudgeSettings' own: one place says what a judge is by default.
_D = {name: field.default for name, field in JudgeSettings.model_fields.items()}


def say(line: str) -> None:
    """One line on stderr, at once: the app's notes to the person running the command."""
    print(line, file=sys.stderr, flush=True)


def concurrency_option(text: str) -> int | str:
    """`--concurrency`: a number of requests in flight (its range is the config's to
    check), or `auto`."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid int value: {text!r} (a number, or auto)"
        ) from None


# The options that tune the judge: flag, type and help; each default is JudgeSettings' own
# (one place says what a judge is by default).
_TUNING: tuple[tuple[str, Any, str], ...] = (
    ("--concurrency", concurrency_option, "requests in flight (%(default)s), or auto: learnt "
     "from the endpoint's 429s and rate-limit headers"),
    ("--rpm", int, "at most this many requests a minute (no cap)"),
    ("--tpm", int, "at most this many tokens a minute (no cap)"),
    ("--temperature", float, "sampling temperature sent to the judge (%(default)s: the most "
     "repeatable verdicts)"),
    ("--top-p", float, "nucleus sampling sent to the judge (unset)"),
    ("--seed", int, "sampling seed sent to the judge (%(default)s)"),
    ("--max-tokens", int, "longest reply the judge may write (%(default)s)"),
    ("--timeout", float, "seconds per request (%(default)s)"),
    ("--max-retries", int, "retries per request after a 408/409/429/5xx, a timeout or a "
     "dropped connection (%(default)s)"),
)  # fmt: skip


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """The options that pick and tune the judge; shared by `grade` and `probe`."""
    group = parser.add_argument_group("judge")
    group.add_argument("--model", help="judge model (default: $JUDGE_MODEL; none = rules judge)")
    group.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    group.add_argument("--offline", action="store_true", help="use the offline rules judge")
    for flag, kind, text in _TUNING:
        default = _D.get(flag[2:].replace("-", "_"))
        group.add_argument(flag, type=kind, default=default, help=text)
    group.add_argument(
        "--samples",
        type=int,
        default=_D["samples"],
        metavar="K",
        help="replies per case (1..50): the label most of them give is the verdict, and the "
        "share that agree with it the record's confidence (%(default)s)",
    )
    group.add_argument(
        "--output-mode",
        choices=list(get_args(OutputMode)),
        default=_D["output_mode"],
        help="how the verdict's JSON is asked for; auto tries json_schema, then json_object, "
        "then the schema in the prompt, as the server allows (%(default)s)",
    )
    group.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="verdict cache folder (default: $XDG_CACHE_HOME/llm-judge or ~/.cache/llm-judge)",
    )
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    add_rubrics_dir_option(parser)


def config_from_args(args: JudgeChoice, env: Mapping[str, str]) -> JudgeConfig:
    """The frozen config from a request's judge options and the environment
    (judge.app.judging.judge_config), its notes said on stderr."""
    return judge_config(args, env, say=say)


def announce_judge(config: JudgeConfig) -> None:
    """One line on stderr saying which judge runs, and whether its verdicts may drift."""
    for line in judge_notes(config):
        print(line, file=sys.stderr)


def add_rubrics_dir_option(parser: argparse.ArgumentParser) -> None:
    """`--rubrics-dir DIR` (repeatable): the user's own rubric folders, after the built-in
    ones; `JUDGE_RUBRICS_DIR` (a path list) adds more."""
    parser.add_argument(
        "--rubrics-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of your own rubrics (DIR/<id>/v<N>.yaml and its rubrics.lock); "
        "repeatable; $JUDGE_RUBRICS_DIR adds more (a path list)",
    )


def show_progress(env: Mapping[str, str]) -> bool:
    return sys.stderr.isatty() and not env.get("CI")


def print_summary(summary: dict[str, Any]) -> None:
    """The summary as a table on stdout: one row for all cases, one per slice."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{summary['rubric']}: {summary['cases']} cases", title_justify="left")
    view = summary_view(summary)
    for heading in ["slice", "cases", "status", *view.columns.values()]:
        table.add_column(heading, justify="left" if heading in ("slice", "status") else "right")
    for name, stats in [("all", summary), *summary.get("by_slice", {}).items()]:
        status = " ".join(f"{k}:{v}" for k, v in stats["status"].items())
        table.add_row(
            name, str(stats["cases"]), status, *(_fmt(stats.get(k)) for k in view.columns)
        )
    console = Console(file=sys.stdout, width=max(110, shutil.get_terminal_size().columns))
    console.print(table)
    for line in view.notes:
        console.print(line, highlight=False)
    cost, tokens = summary.get("estimated_cost_usd"), summary["tokens"]
    console.print(
        f"tokens: {tokens['prompt']} prompt, {tokens['completion']} completion; "
        f"cached: {summary['cached']}; estimated cost: "
        + ("unknown (pass --price-input/--price-output)" if cost is None else f"${cost:.4f}")
    )
    if view.resumed:
        print(view.resumed, flush=True)
    if "cascade" in summary:
        for line in cascade_lines(summary["cascade"]):
            console.print(line, highlight=False)
    print_estimates(summary)


def say_requests(backend: object) -> None:
    """One line on stderr: requests sent, refused (429/503), the most in flight and, for
    `--concurrency auto`, the window it reached (a model judge's; the rules judge sends none)."""
    summary = getattr(backend, "request_summary", None)
    if summary is None:
        return
    sent = summary()
    line = (
        f"requests: {sent['sent']} sent, {sent['refused']} refused (429/503); "
        f"at most {sent['peak_in_flight']} in flight"
    )
    if "window" in sent:
        window = sent["window"]
        line += f" (--concurrency auto reached {window['peak']}, ended at {window['final']})"
    print(line, file=sys.stderr)


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k}:{_fmt(v)}" for k, v in value.items())
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
