"""`judge align`: write the next version of a rubric with few-shot examples from labelled
disagreements on the dev split; argument parsing and printing only (the job is
`judge.app.align`). Loaded only when `align` is chosen.

Adoption is left to `judge gate` on the test split: the command writes the test split's
labels and prints the `judge grade` and `judge gate` commands to run next.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from judge.app.align import align_rubric, prepare_alignment, records_judge
from judge.cli._common import EXIT_OK, add_rubrics_dir_option, user_rubric_dirs
from judge.cli._flag_types import non_negative_int, test_split
from judge.cli._help import ALIGN_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import AlignRequest, request_from
from judge.rubric import Rubric

DEFAULT_EXAMPLES = 4
MAX_EXAMPLES = 50


def _examples(text: str) -> int:
    value = non_negative_int(text)
    if not 1 <= value <= MAX_EXAMPLES:
        raise argparse.ArgumentTypeError(f"{value} is not between 1 and {MAX_EXAMPLES}")
    return value


def add_align(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "align",
        help="next rubric version with examples from labelled disagreements (dev split)",
        description="Write the next version of a rubric whose prompt shows the judge a few "
        "cases it got wrong on the dev split, with the label people gave; the test split is "
        "left for `judge gate`, whose commands are printed.",
        epilog=ALIGN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_files(p)
    _add_split(p)
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_align)


def _add_files(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rubric", required=True,
                   help="the rubric the records were graded with: ID[@VERSION]")  # fmt: skip
    p.add_argument("--labels", type=Path, required=True, metavar="HUMAN",
                   help="human labels (CSV or JSONL with id and label; a note column becomes "
                   "the examples' notes)")  # fmt: skip
    p.add_argument("--records", type=Path, required=True, metavar="DEV",
                   help="the judge's graded records of the labelled cases, with --rubric")  # fmt: skip
    p.add_argument("--cases", type=Path, required=True, metavar="CASES",
                   help="the cases file the records were graded from: the examples' inputs")  # fmt: skip


def _add_split(p: argparse.ArgumentParser) -> None:
    split = p.add_mutually_exclusive_group(required=True)
    split.add_argument("--split", type=test_split, metavar="test=F",
                       help="hold out a share F of the labelled cases, stratified by human "
                       "label, exactly as `judge calibrate --split test=F --seed S`; examples "
                       "come from the rest (dev)")  # fmt: skip
    split.add_argument("--dev-ids", type=Path, metavar="FILE",
                       help="the dev ids instead: one a line, or a `judge calibrate --split` "
                       "calibration.json (its split.dev_ids); every other labelled case is test")  # fmt: skip
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of --split (as judge calibrate's) and of the pick (default: 0)")  # fmt: skip
    p.add_argument("--examples", type=_examples, default=DEFAULT_EXAMPLES, metavar="N",
                   help=f"at most N examples, spread over the human labels (default: {DEFAULT_EXAMPLES})")  # fmt: skip
    p.add_argument("--test-labels", type=Path, metavar="FILE",
                   help="where to write the test split's labels for `judge gate` (default: "
                   "HUMAN's name with .test.jsonl, in the current folder)")  # fmt: skip
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --test-labels file")  # fmt: skip


def run_align(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return align_command(request_from(AlignRequest, args), env)


def align_command(request: AlignRequest, env: Mapping[str, str]) -> int:
    """`judge align`, from its request."""
    setup = prepare_alignment(request, user_rubric_dirs(request, env))
    _check_outputs(setup.test_labels, setup.target.path, request)
    judge = records_judge(request.records, setup.rubric)
    if judge.warning:
        print(f"judge align: warning: {judge.warning}", file=sys.stderr)
    done = align_rubric(request, setup)
    if done.written is None:
        print(
            f"judge align: the judge agrees with people on every dev case ({done.how}): "
            "nothing to learn from, no rubric written",
            file=sys.stderr,
        )
        return EXIT_OK
    print(
        f"wrote {setup.target.path} ({done.written.ref}, not locked): {len(done.examples)} "
        f"examples from {done.disagreements} disagreements on the dev split; {done.how}"
    )
    print(f"examples: {', '.join(done.examples)}")
    print(f"the test split's labels ({done.test_rows} rows): {setup.test_labels}")
    _next_steps(request, done.written, setup.target.folder, setup.test_labels, judge.model)
    return EXIT_OK


def _check_outputs(test_labels: Path, rubric_file: Path, request: AlignRequest) -> None:
    """Both outputs through the one output check (and locked): the test split's labels
    replaced only with --overwrite, the new rubric version never (it is written O_EXCL)."""
    inputs = [request.labels, request.records, *([request.cases] if request.cases else [])]
    test_output = Output("--test-labels", test_labels, "test-labels")
    check_outputs([test_output], inputs, overwrite=request.overwrite)
    check_outputs(
        [Output("the aligned rubric", rubric_file, "rubric-version")], inputs, overwrite=None
    )


def _next_steps(
    request: AlignRequest, rubric: Rubric, folder: Path, labels: Path, model: str | None
) -> None:
    q = shlex.quote
    candidate = Path(f"{request.records.stem}.{rubric.id}-v{rubric.version}.jsonl")
    print(
        "next: grade with it (with the judge options RECORDS were graded with), gate it on "
        "the test split, lock it if the gate passes:"
    )
    print(
        f"  judge grade {q(str(request.cases))} --rubric {rubric.ref} --rubrics-dir {q(str(folder))} "
        f"-o {q(str(candidate))}" + (f" --model {q(model)}" if model else "")
    )
    print(
        f"  judge gate --baseline {q(str(request.records))} --candidate {q(str(candidate))} "
        f"--labels {q(str(labels))}"
    )
    print(f"  judge rubrics lock --rubrics-dir {q(str(folder))}")
