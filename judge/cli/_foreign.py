"""`judge calibrate --from promptfoo|deepeval|inspect|ragas`: another tool's judge output as
the judge side (`calibration.foreign` reads it), written as a label file into the report
folder (`judge-side.TOOL.jsonl`) and calibrated as one, so every statistic is the one a
label file gets. Detected when `--from` is not given."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.cli._requests import CalibrateRequest

FROM_CHOICES = ("promptfoo", "deepeval", "inspect", "ragas")


def add_foreign_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("another tool's judge output")
    group.add_argument(
        "--from",
        dest="from_tool",
        choices=FROM_CHOICES,
        help="read JUDGE_LABELS as this tool's output (detected when not given): promptfoo "
        "results JSON, DeepEval test-run JSON, Inspect eval log (.json/.eval), Ragas CSV",
    )
    group.add_argument(
        "--metric",
        dest="foreign_metric",
        metavar="NAME",
        help="which of the tool's metrics or scorers is the judge (needed when it has several)",
    )
    group.add_argument(
        "--pass-labels",
        metavar="PASS,FAIL",
        help="the human file's names for the tool's pass and fail (e.g. faithful,unfaithful)",
    )


def foreign_judge_side(request: CalibrateRequest) -> CalibrateRequest:
    """The request to calibrate: when `judge_labels` is another tool's output, one naming a
    label file staged from it in the report folder (scores only: `judge_field` score); the
    mapping and unmapped fields are said on stderr. Otherwise `request` itself."""
    path = request.judge_labels
    if path is None or not Path(path).is_file():
        return request
    from calibration.errors import CalibrationInputError
    from calibration.foreign import detect_format, read_foreign
    from calibration.report.output import output_problem
    from judge.errors import UsageError

    try:
        tool = request.from_tool or detect_format(Path(path))
        foreign = None if tool is None else read_foreign(Path(path), tool, request.foreign_metric)
    except (CalibrationInputError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if foreign is None:
        return request
    names = _pass_names(request.pass_labels)
    print(f"judge side: {foreign.describe()}", file=sys.stderr)
    has_label = any("label" in row for row in foreign.rows)
    judge_field = request.judge_field
    if not has_label and judge_field == "label":
        judge_field = "score"  # Ragas: scores only
    folder = Path(request.output)
    if output_problem(folder, folder=True) is not None:
        return request  # calibrate says what is wrong with -o
    # the converted rows stay beside the report: they are what was calibrated
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f"judge-side.{tool}.jsonl"
    with staged.open("w", encoding="utf-8") as out:
        for row in foreign.rows:
            if "label" in row:
                row = {**row, "label": names.get(row["label"], row["label"])}
            # a row with no verdict (an error, Inspect's partial credit) is excluded and
            # counted by calibration, never read as a pass or a fail
            out.write(json.dumps({judge_field: None, **row}) + "\n")
    return replace(request, judge_labels=staged, judge_field=judge_field)


def _pass_names(text: str | None) -> dict[str, str]:
    from judge.errors import UsageError

    if not text:
        return {}
    names = [v.strip() for v in text.split(",")]
    if len(names) != 2 or not all(names):
        raise UsageError(f"--pass-labels takes PASS,FAIL (two names), got {text!r}")
    return {"pass": names[0], "fail": names[1]}
