"""`judge` command line: argument parsing and printing only; the work is in the modules.

Start-up stays light: a subcommand's module, and the libraries behind it (the HTTP client,
scipy, scikit-learn, matplotlib, FastAPI), load only when that subcommand runs
(judge/cli/_parser.py); `judge --help`, `--version` and `rubrics` load none of them. What
the help says to users is in judge/cli/_help.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, get_args

from pydantic import SecretStr, ValidationError

from judge.cli._labels import print_estimates
from judge.config import (
    JudgeConfig,
    JudgeSettings,
    OutputMode,
    default_cache_dir,
    endpoint_of,
)
from judge.errors import UsageError
from judge.kinds import get_kind
from judge.rubric import RubricLibrary

if TYPE_CHECKING:
    from judge.cli._requests import JudgeOptions

EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3
MAX_LISTED_MODELS = 20
OFFLINE_NOTE = (
    "judge: no model configured: grading with the offline rules judge (deterministic, no network)"
)


# The judge options' defaults are JudgeSettings' own: one place says what a judge is by default.
_D = {name: field.default for name, field in JudgeSettings.model_fields.items()}


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


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """The options that pick and tune the judge; shared by `grade` and `probe`."""
    group = parser.add_argument_group("judge")
    group.add_argument("--model", help="judge model (default: $JUDGE_MODEL; none = rules judge)")
    group.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    group.add_argument("--offline", action="store_true", help="use the offline rules judge")
    group.add_argument(
        "--concurrency",
        type=concurrency_option,
        default=_D["concurrency"],
        help="requests in flight (%(default)s), or auto: learnt from the endpoint's 429s and "
        "rate-limit headers",
    )
    group.add_argument(
        "--rpm", type=int, default=None, help="at most this many requests a minute (no cap)"
    )
    group.add_argument(
        "--tpm", type=int, default=None, help="at most this many tokens a minute (no cap)"
    )
    group.add_argument(
        "--temperature",
        type=float,
        default=_D["temperature"],
        help="sampling temperature sent to the judge (%(default)s: the most repeatable verdicts)",
    )
    group.add_argument(
        "--top-p",
        type=float,
        default=_D["top_p"],
        help="nucleus sampling sent to the judge (unset)",
    )
    group.add_argument(
        "--seed", type=int, default=_D["seed"], help="sampling seed sent to the judge (%(default)s)"
    )
    group.add_argument(
        "--max-tokens",
        type=int,
        default=_D["max_tokens"],
        help="longest reply the judge may write (%(default)s)",
    )
    group.add_argument(
        "--timeout", type=float, default=_D["timeout"], help="seconds per request (%(default)s)"
    )
    group.add_argument(
        "--max-retries",
        type=int,
        default=_D["max_retries"],
        help="retries per request after a 408/409/429/5xx, a timeout or a dropped connection "
        "(%(default)s)",
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


def api_key_from(env: Mapping[str, str]) -> SecretStr | None:
    """`$OPENAI_API_KEY`, the one place the CLI reads a key (a secret from then on)."""
    key = env.get("OPENAI_API_KEY")
    return SecretStr(key) if key else None


def config_from_args(args: JudgeOptions, env: Mapping[str, str]) -> JudgeConfig:
    """Build the frozen config from the judge options (a request's `judge`), falling back to
    the environment read at the edge."""
    # flag, then environment, then the project file ([tool.judge]: judge.project_config)
    project_url = args.project_base_url
    model = None if args.offline else (args.model or env.get("JUDGE_MODEL") or args.project_model)
    try:
        config = JudgeConfig(
            model=model,
            base_url=args.base_url or env.get("OPENAI_BASE_URL") or project_url,
            api_key=api_key_from(env),
            temperature=args.temperature,
            top_p=args.top_p,
            seed=args.seed,
            max_tokens=args.max_tokens,
            timeout=args.timeout,
            max_retries=args.max_retries,
            output_mode=args.output_mode,
            concurrency=args.concurrency,
            rpm=args.rpm,
            tpm=args.tpm,
            cache_dir=args.cache_dir or default_cache_dir(env),
            use_cache=not args.no_cache,
        )
    except ValidationError as exc:
        problems = "; ".join(f"--{'-'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(problems.replace("_", "-")) from None
    if config.offline and (args.base_url or project_url) and not args.offline:
        # --base-url alone: the endpoint's one model, never a silent fall back to rules
        config = config.model_copy(update={"model": discover_model(config)})
    return config


def announce_judge(config: JudgeConfig) -> None:
    """One line on stderr saying which judge runs, and whether its verdicts may drift
    (an unpinned alias at a hosted provider: `JudgeConfig.may_drift`)."""
    if config.offline:
        print(OFFLINE_NOTE, file=sys.stderr)
    elif config.may_drift:
        print(
            f"judge: warning: model {config.model!r} is not pinned to a dated snapshot; "
            "its verdicts may drift when the provider updates it",
            file=sys.stderr,
        )


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


class RubricFolders(Protocol):
    """A request that takes `--rubrics-dir` (grade, probe, align, compare, ...)."""

    @property
    def rubrics_dir(self) -> Sequence[Path]: ...


def user_rubric_dirs(args: RubricFolders, env: Mapping[str, str]) -> list[Path]:
    """The user's rubric folders: `--rubrics-dir` ones, then `$JUDGE_RUBRICS_DIR`'s."""
    listed = [Path(p) for p in env.get("JUDGE_RUBRICS_DIR", "").split(os.pathsep) if p]
    return [*args.rubrics_dir, *listed]


def rubric_library(args: RubricFolders, env: Mapping[str, str]) -> RubricLibrary:
    """The built-in rubrics and the user's folders (read at the edge, once)."""
    return RubricLibrary(user_rubric_dirs(args, env))


def show_progress(env: Mapping[str, str]) -> bool:
    return sys.stderr.isatty() and not env.get("CI")


# ---- shared by grade and its batch forms ----------------------------------------------


def print_summary(summary: dict[str, Any]) -> None:
    """The summary as a table on stdout: one row for all cases, one per slice."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{summary['rubric']}: {summary['cases']} cases", title_justify="left")
    kind = get_kind(summary["kind"])
    columns = kind.headings(summary)
    for heading in ["slice", "cases", "status", *columns.values()]:
        table.add_column(heading, justify="left" if heading in ("slice", "status") else "right")
    rows = [("all", summary), *summary.get("by_slice", {}).items()]
    for name, stats in rows:
        status = " ".join(f"{k}:{v}" for k, v in stats["status"].items())
        cells = (_fmt(stats.get(key)) for key in columns)
        table.add_row(name, str(stats["cases"]), status, *cells)
    console = Console(file=sys.stdout, width=max(110, shutil.get_terminal_size().columns))
    console.print(table)
    for line in [*kind.summary_notes(summary), *rules_judge_notes(summary)]:
        console.print(line, highlight=False)
    cost = summary.get("estimated_cost_usd")
    tokens = summary["tokens"]
    console.print(
        f"tokens: {tokens['prompt']} prompt, {tokens['completion']} completion; "
        f"cached: {summary['cached']}; estimated cost: "
        + ("unknown (pass --price-input/--price-output)" if cost is None else f"${cost:.4f}")
    )
    from judge.engine.resume import run_line  # the engine loads only when a run prints

    resumed = run_line(summary)
    if resumed:
        print(resumed, flush=True)
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


def rules_judge_notes(summary: dict[str, Any]) -> list[str]:
    """Why every case abstained, when the offline rules judge graded a kind it cannot."""
    models = summary.get("judge_models") or {}
    status = summary.get("status") or {}
    if set(models) == {"rules"} and status and set(status) == {"abstained"}:
        return [
            f"every case abstained: the offline rules judge cannot grade a "
            f"{summary['kind']!r} rubric; use a model judge (--model)"
        ]
    return []


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k}:{_fmt(v)}" for k, v in value.items())
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def discover_model(config: JudgeConfig) -> str:
    """The one model `--base-url` serves; UsageError listing them when it serves several
    or none."""
    from judge.client import served_models  # the HTTP client loads only when asked

    models = served_models(config)
    where = endpoint_of(config.base_url)  # never the user name or password of the URL
    if len(models) == 1:
        print(f"judge: {where} serves one model: grading with {models[0]!r}", file=sys.stderr)
        return models[0]
    if not models:
        raise UsageError(f"--base-url {where} lists no model at /models; pass --model")
    shown = ", ".join(models[:MAX_LISTED_MODELS])
    more = f" and {len(models) - MAX_LISTED_MODELS} more" if len(models) > MAX_LISTED_MODELS else ""
    raise UsageError(
        f"--base-url {where} serves {len(models)} models ({shown}{more}); pick one with --model"
    )
