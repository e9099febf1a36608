"""`judge` command line: argument parsing and printing only; the work is in the modules."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from judge.api import open_grader
from judge.config import JudgeConfig
from judge.errors import ApiError, InputError, JudgeError, RubricError, UsageError
from judge.jobs import Selection, grade_file
from judge.pricing import price_for
from judge.report.cli import add_html_option, check_grade_html, grade_html, run_calibrate
from judge.rubric import DEFAULT_RUBRICS_DIR, Rubric, list_rubrics, load_rubric, verify_lock

EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_GATE = 0, 1, 2, 3
OFFLINE_NOTE = (
    "judge: no model configured: grading with the offline rules judge (deterministic, no network)"
)


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """The options that pick and tune the judge; shared by `grade` and `probe`."""
    group = parser.add_argument_group("judge")
    group.add_argument("--model", help="judge model (default: $JUDGE_MODEL; none = rules judge)")
    group.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    group.add_argument("--offline", action="store_true", help="use the offline rules judge")
    group.add_argument("--concurrency", type=int, default=16, help="requests in flight (16)")
    group.add_argument("--temperature", type=float, default=0.0)
    group.add_argument("--top-p", type=float, default=None)
    group.add_argument("--seed", type=int, default=42, help="sampling seed sent to the judge (42)")
    group.add_argument("--max-tokens", type=int, default=1024)
    group.add_argument("--timeout", type=float, default=60.0, help="seconds per request (60)")
    group.add_argument("--max-retries", type=int, default=5)
    group.add_argument(
        "--output-mode", choices=["auto", "json_schema", "json_object", "prompt"], default="auto"
    )
    group.add_argument("--cache-dir", type=Path, default=None, help="(~/.cache/llm-judge)")
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    group.add_argument("--rubrics-dir", type=Path, default=None, help=argparse.SUPPRESS)


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> JudgeConfig:
    """Build the frozen config from flags, falling back to the environment read at the edge."""
    model = None if args.offline else (args.model or env.get("JUDGE_MODEL") or None)
    key = env.get("OPENAI_API_KEY")
    try:
        return JudgeConfig(
            model=model,
            base_url=args.base_url or env.get("OPENAI_BASE_URL") or None,
            api_key=SecretStr(key) if key else None,
            temperature=args.temperature,
            top_p=args.top_p,
            seed=args.seed,
            max_tokens=args.max_tokens,
            timeout=args.timeout,
            max_retries=args.max_retries,
            output_mode=args.output_mode,
            concurrency=args.concurrency,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
        )
    except ValidationError as exc:
        problems = "; ".join(f"--{'-'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(problems.replace("_", "-")) from None


def announce_judge(config: JudgeConfig) -> None:
    """One line on stderr saying which judge runs, and whether it is pinned."""
    if config.offline:
        print(OFFLINE_NOTE, file=sys.stderr)
    elif not config.is_pinned:
        print(
            f"judge: warning: model {config.model!r} is not pinned to a dated snapshot; "
            "its verdicts may drift when the provider updates it",
            file=sys.stderr,
        )


def rubrics_dir(args: argparse.Namespace, env: Mapping[str, str]) -> Path:
    return Path(args.rubrics_dir or env.get("JUDGE_RUBRICS_DIR") or DEFAULT_RUBRICS_DIR)


def show_progress(env: Mapping[str, str]) -> bool:
    return sys.stderr.isatty() and not env.get("CI")


# ---- judge rubrics ---------------------------------------------------------------------


def _add_rubrics(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rubrics", help="list rubrics, or show one")
    p.add_argument("action", nargs="?", choices=["list", "show", "verify"], default="list")
    p.add_argument("ref", nargs="?", help="ID@VERSION for show")
    p.add_argument("--rubrics-dir", type=Path, default=None, help=argparse.SUPPRESS)
    p.set_defaults(run=_run_rubrics)


def _run_rubrics(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    folder = rubrics_dir(args, env)
    if args.action == "show":
        if not args.ref:
            raise UsageError("judge rubrics show needs ID@VERSION, e.g. faithfulness@1")
        rubric = load_rubric(args.ref, folder)
        print(f"# {rubric.ref}  kind={rubric.kind}  sha256={rubric.sha256}\n# {rubric.path}")
        print(Path(rubric.path).read_text("utf-8"), end="")
        return EXIT_OK
    problems = verify_lock(folder)
    if args.action == "verify":
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        print("rubrics.lock: all released rubrics match" if not problems else "")
        return EXIT_USAGE if problems else EXIT_OK
    print(f"{'rubric':<16} {'version':>7}  {'kind':<13} sha256")
    for rubric in list_rubrics(folder):
        print(f"{rubric.id:<16} {rubric.version:>7}  {rubric.kind:<13} {rubric.short_hash}")
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    return EXIT_OK


# ---- judge grade -----------------------------------------------------------------------


def _add_grade(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("grade", help="grade an answer set (JSONL or CSV) with one rubric")
    p.add_argument("input", help="JSONL or CSV file of cases, or - for stdin")
    p.add_argument("--rubric", required=True, help="ID or ID@VERSION (latest version if omitted)")
    p.add_argument("-o", "--output", type=Path, help="records file (default: INPUT.RUBRIC.jsonl)")
    p.add_argument("--summary", type=Path, help="also write the summary as JSON here")
    p.add_argument("--input-format", choices=["jsonl", "csv"], help="format of stdin input")
    p.add_argument("--limit", type=int, help="grade only the first N cases")
    p.add_argument(
        "--sample",
        type=int,
        help="grade a reproducible random sample of N cases (seeded by --seed)",
    )
    p.add_argument("--sample-seed", type=int, help="seed of --sample alone (default: --seed)")
    p.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    p.add_argument("--price-input", type=float, help="USD per million prompt tokens")
    p.add_argument("--price-output", type=float, help="USD per million completion tokens")
    scale = p.add_mutually_exclusive_group()  # judge/cli_batch.py runs these
    scale.add_argument("--batch-api", action="store_true", help="grade through the Batch API")
    scale.add_argument(
        "--export-batch", metavar="REQUESTS.jsonl", help="only write the batch request file"
    )
    scale.add_argument(
        "--import-batch",
        metavar="RESULTS.jsonl",
        action="append",
        help="records from a batch results file (OpenAI or vLLM; repeat for several)",
    )
    add_html_option(p)
    add_judge_options(p)
    p.set_defaults(run=_run_grade)


def _run_grade(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    check_grade_html(args)
    if args.batch_api or args.export_batch or args.import_batch:
        from judge.cli_batch import run_grade_batch

        return run_grade_batch(args, env)
    for name in ("limit", "sample"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be at least 1, got {value}")
    config = config_from_args(args, env)
    rubric = load_rubric(args.rubric, rubrics_dir(args, env))
    with _input_file(args.input, args.input_format) as input_path:
        output = args.output or Path(f"{input_path.stem}.{rubric.id}.jsonl")
        if output.resolve() == input_path.resolve():
            raise UsageError(f"the output {output} would overwrite the input")
        announce_judge(config)
        prices = prices_from_args(args, config)
        summary = asyncio.run(_grade(config, rubric, input_path, output, args, env, prices))
        grade_html(args, summary, output, input_path)
    print_summary(summary)
    print(f"records: {output}", file=sys.stderr)
    if args.summary:
        write_json(args.summary, summary)
    return EXIT_OK


async def _grade(
    config: JudgeConfig,
    rubric: Rubric,
    input_path: Path,
    output: Path,
    args: argparse.Namespace,
    env: Mapping[str, str],
    prices: tuple[float, float] | None,
) -> dict[str, Any]:
    async with open_grader(config, rubric) as grader:
        return await grade_file(
            grader,
            input_path,
            output,
            selection=selection_from_args(args),
            overwrite=args.overwrite,
            use_cache=config.use_cache,
            progress=show_progress(env),
            prices=prices,
        )


def selection_from_args(args: argparse.Namespace) -> Selection:
    """`--limit N`, or `--sample N` seeded by `--sample-seed`, else by `--seed`."""
    seed = args.sample_seed if args.sample_seed is not None else args.seed
    return Selection(limit=args.limit, sample=args.sample, seed=seed if seed is not None else 0)


def prices_from_args(args: argparse.Namespace, config: JudgeConfig) -> tuple[float, float] | None:
    """USD per million (prompt, completion) tokens: the flags, else the table's price."""
    if args.price_input is not None or args.price_output is not None:
        return (args.price_input or 0.0, args.price_output or 0.0)
    return price_for(config.model or "rules")


class _input_file:
    """The input path; stdin (`-`) is spooled to a temporary file so it can be read twice."""

    def __init__(self, name: str, fmt: str | None) -> None:
        self.name, self.fmt = name, fmt
        self._tmp: Path | None = None

    def __enter__(self) -> Path:
        if self.name != "-":
            return Path(self.name)
        suffix = ".csv" if self.fmt == "csv" else ".jsonl"
        handle = tempfile.NamedTemporaryFile(prefix="stdin-", suffix=suffix, delete=False)
        with handle:
            shutil.copyfileobj(sys.stdin.buffer, handle)
        self._tmp = Path(handle.name)
        return self._tmp

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)


def print_summary(summary: dict[str, Any]) -> None:
    """The summary as a table on stdout: one row for all cases, one per slice."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{summary['rubric']}: {summary['cases']} cases", title_justify="left")
    columns = _HEADLINES.get(summary["kind"], _HEADLINES["pairwise"])
    for heading in ["slice", "cases", "status", *columns.values()]:
        table.add_column(heading, justify="left" if heading in ("slice", "status") else "right")
    rows = [("all", summary), *summary.get("by_slice", {}).items()]
    for name, stats in rows:
        status = " ".join(f"{k}:{v}" for k, v in stats["status"].items())
        cells = (_fmt(stats.get(key)) for key in columns)
        table.add_row(name, str(stats["cases"]), status, *cells)
    console = Console(file=sys.stdout, width=max(110, shutil.get_terminal_size().columns))
    console.print(table)
    cost = summary.get("estimated_cost_usd")
    tokens = summary["tokens"]
    console.print(
        f"tokens: {tokens['prompt']} prompt, {tokens['completion']} completion; "
        f"cached: {summary['cached']}; estimated cost: "
        + ("unknown (pass --price-input/--price-output)" if cost is None else f"${cost:.4f}")
    )


_HEADLINES = {
    "faithfulness": {
        "mean_score": "mean",
        "claims": "claims",
        "claim_hallucination_rate": "halluc/claim",
        "answer_hallucination_rate": "halluc/answer",
        "contradicted_claims": "contradicted",
    },
    "relevance": {"mean_relevance": "mean 1-5", "mean_normalised": "normalised"},
    "pairwise": {"win_rates": "win rates"},
}


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k}:{_fmt(v)}" for k, v in value.items())
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n", "utf-8")


# ---- judge calibrate -------------------------------------------------------------------


def _add_calibrate(sub: argparse._SubParsersAction) -> None:
    from calibration import cli as calibration_cli

    p = sub.add_parser("calibrate", help="agreement of a judge's labels with human labels")
    calibration_cli.add_arguments(p)  # --cases included: --html and --explain share it
    add_html_option(p)
    p.set_defaults(run=lambda args, env: run_calibrate(args))


def _add_gate(sub: argparse._SubParsersAction) -> None:
    from calibration import cli_gate

    p = sub.add_parser("gate", help="a candidate judge against the baseline on human labels")
    cli_gate.add_arguments(p)
    p.set_defaults(run=lambda args, env: cli_gate.run(args))


# ---- main ------------------------------------------------------------------------------

Register = Callable[[argparse._SubParsersAction], None]


def _registrars() -> list[Register]:
    # Feature subcommands keep their parsing beside them, in judge/cli_<feature>.py.
    from judge.cli_batch import add_batch_command as _add_batch
    from judge.cli_probe import add_probe_command as _add_probe
    from judge.cli_serve import add_serve as _add_serve
    from judge.label.cli import add_label_command as _add_label

    return [
        _add_rubrics,
        _add_grade,
        _add_calibrate,
        _add_gate,
        _add_batch,
        _add_probe,
        _add_serve,
        _add_label,
    ]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="judge", description=__doc__)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in _registrars():
        register(sub)
    return parser


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.run(args, env))
    except (InputError, RubricError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ApiError as exc:
        print(f"error: the judge endpoint failed, nothing more was sent: {exc}", file=sys.stderr)
        return EXIT_FATAL
    except JudgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FATAL
    except KeyboardInterrupt:
        print("interrupted: records written so far are kept; run again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
