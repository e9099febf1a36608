"""`judge align`: write the next version of a rubric with few-shot examples from labelled
disagreements on the dev split; argument parsing and printing only (the picking is in
calibration.pairs.teaching_cases, the writing in judge.engine.measure.aligned_rubric). Loaded only when `align` is chosen.

Adoption is left to `judge gate` on the test split: the command writes the test split's
labels and prints the `judge grade` and `judge gate` commands to run next.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from calibration.errors import CalibrationInputError
from calibration.io.rows import read_label_rows
from calibration.pairs.teaching_cases import AlignmentSet, alignment_set
from judge.cli._common import EXIT_OK, add_rubrics_dir_option, rubric_library, user_rubric_dirs
from judge.cli._flag_types import non_negative_int, test_split
from judge.cli._help import ALIGN_EXAMPLES
from judge.cli._outputs import Output, check_outputs
from judge.cli._requests import AlignRequest, request_from
from judge.engine.measure.aligned_rubric import (
    aligned_target,
    aligned_text,
    choose_examples,
    write_aligned,
    write_test_labels,
)
from judge.engine.rules import RULES_INFO
from judge.errors import InputError, UsageError
from judge.rubric import Rubric, load_rubric

RULES_MODEL = RULES_INFO.model
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
    p.add_argument(
        "--rubric", required=True, help="the rubric the records were graded with: ID[@VERSION]"
    )
    p.add_argument(
        "--labels",
        type=Path,
        required=True,
        metavar="HUMAN",
        help="human labels (CSV or JSONL with id and label; a note column becomes "
        "the examples' notes)",
    )
    p.add_argument(
        "--records",
        type=Path,
        required=True,
        metavar="DEV",
        help="the judge's graded records of the labelled cases, with --rubric",
    )
    p.add_argument(
        "--cases",
        type=Path,
        required=True,
        metavar="CASES",
        help="the cases file the records were graded from: the examples' inputs",
    )
    split = p.add_mutually_exclusive_group(required=True)
    split.add_argument(
        "--split",
        type=test_split,
        metavar="test=F",
        help="hold out a share F of the labelled cases, stratified by human "
        "label, exactly as `judge calibrate --split test=F --seed S`; examples "
        "come from the rest (dev)",
    )
    split.add_argument(
        "--dev-ids",
        type=Path,
        metavar="FILE",
        help="the dev ids instead: one a line, or a `judge calibrate --split` "
        "calibration.json (its split.dev_ids); every other labelled case is test",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="seed of --split (as judge calibrate's) and of the pick (default: 0)",
    )
    p.add_argument(
        "--examples",
        type=_examples,
        default=DEFAULT_EXAMPLES,
        metavar="N",
        help=f"at most N examples, spread over the human labels (default: {DEFAULT_EXAMPLES})",
    )
    p.add_argument(
        "--test-labels",
        type=Path,
        metavar="FILE",
        help="where to write the test split's labels for `judge gate` (default: "
        "HUMAN's name with .test.jsonl, in the current folder)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace an existing --test-labels file"
    )
    add_rubrics_dir_option(p)
    p.set_defaults(run=run_align)


def _dev_ids(path: Path) -> list[str]:
    """Ids from a text file (one a line) or a calibration.json's split.dev_ids."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), [(None, None, f"cannot be read ({exc})")]) from None
    if text.lstrip().startswith("{"):
        try:
            ids = json.loads(text)["split"]["dev_ids"]
        except (ValueError, KeyError, TypeError):
            raise InputError(
                str(path), [(None, None, "a JSON file without split.dev_ids")]
            ) from None
        return [str(i) for i in ids]
    return [line.strip() for line in text.splitlines() if line.strip()]


def run_align(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return align_command(request_from(AlignRequest, args), env)


def align_command(request: AlignRequest, env: Mapping[str, str]) -> int:
    """`judge align`, from its request."""
    user_dirs = user_rubric_dirs(request, env)
    if user_dirs and not user_dirs[0].exists():
        user_dirs[0].mkdir(parents=True)  # the folder the aligned rubric is written into
    library = rubric_library(request, env)
    rubric = load_rubric(request.rubric, library)
    target = aligned_target(rubric, library, user_dirs)
    test_labels = request.test_labels or Path(f"{request.labels.stem}.test.jsonl")
    _check_outputs(test_labels, target.path, request)
    model = _check_records(request.records, rubric)
    aligned = _alignment(request)
    disagreements = aligned.disagreements()
    if not disagreements:
        print(
            f"judge align: the judge agrees with people on every dev case ({aligned.how}): "
            "nothing to learn from, no rubric written",
            file=sys.stderr,
        )
        return EXIT_OK
    examples = choose_examples(
        rubric, aligned, request.cases, n=request.examples, seed=request.seed
    )
    provenance = _provenance(rubric, request, aligned, len(examples), len(disagreements))
    written = write_aligned(aligned_text(rubric, target, examples, provenance), target)
    rows = write_test_labels(request.labels, (aligned.ids[i] for i in aligned.test), test_labels)
    print(
        f"wrote {target.path} ({written.ref}, not locked): {len(examples)} examples from "
        f"{len(disagreements)} disagreements on the dev split; {aligned.how}"
    )
    print(f"examples: {', '.join(e.id for e in examples)}")
    print(f"the test split's labels ({rows} rows): {test_labels}")
    _next_steps(request, written, target.folder, test_labels, model)
    return EXIT_OK


def _alignment(request: AlignRequest) -> AlignmentSet:
    dev = _dev_ids(request.dev_ids) if request.dev_ids else None
    try:
        return alignment_set(
            request.records,
            request.labels,
            test_fraction=request.split,
            seed=request.seed,
            dev_ids=dev,
        )
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None


def _check_outputs(test_labels: Path, rubric_file: Path, request: AlignRequest) -> None:
    """Both outputs through the one output check (and locked): the test split's labels
    replaced only with --overwrite, the new rubric version never (it is written O_EXCL)."""
    inputs = [request.labels, request.records, *([request.cases] if request.cases else [])]
    test_output = Output("--test-labels", test_labels, "test-labels")
    check_outputs([test_output], inputs, overwrite=request.overwrite)
    check_outputs(
        [Output("the aligned rubric", rubric_file, "rubric-version")], inputs, overwrite=None
    )


def _check_records(records: Path, rubric: Rubric) -> str | None:
    """The records must be the judge's with this rubric (a plain id,label file passes);
    returns the model that graded them (None: the rules judge, or not said)."""
    try:
        first = next((row for _, row in read_label_rows(records)), None)
    except CalibrationInputError as exc:
        raise UsageError(str(exc)) from None
    graded = first.get("rubric") if first else None
    if graded is not None and str(graded) != rubric.id:
        raise UsageError(
            f"--records {records} were graded with rubric {graded!r}, not {rubric.id!r}: "
            "align the rubric the records were graded with"
        )
    judge = first.get("judge") if first else None
    model = judge.get("model") if isinstance(judge, dict) else None
    if model == RULES_MODEL:
        print(
            f"judge align: warning: --records {records} are the offline rules judge's, which "
            "reads no examples: the aligned rubric grades exactly as before on it (a gate then "
            "passes with a difference of 0); align the records of the model judge you use",
            file=sys.stderr,
        )
    return str(model) if model and model != RULES_MODEL else None


def _provenance(
    rubric: Rubric, request: AlignRequest, aligned: AlignmentSet, n: int, total: int
) -> str:
    split = f"--split test={request.split:g}" if request.split else f"--dev-ids {request.dev_ids}"
    return (
        f"Written by `judge align` from {rubric.ref} (sha256 {rubric.short_hash}) with\n"
        f"labels {request.labels.name}, records {request.records.name}, {split} --seed {request.seed}:\n"
        f"{n} examples from {total} labelled disagreements on the dev split; {aligned.how}.\n"
        "Not locked: review it, grade with it and adopt it only if `judge gate` passes on\n"
        "the test split; then lock it (judge rubrics lock)."
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
