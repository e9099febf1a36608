"""`judge calibrate --from promptfoo|deepeval|inspect|ragas`: another tool's judge output as
the judge side (`calibration.foreign` reads it), written as a label file into the report
folder (`judge-side.TOOL.jsonl`) and calibrated as one, so every statistic is the one a
label file gets. Detected when `--from` is not given."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from calibration.errors import CalibrationInputError
from calibration.foreign import ForeignRows, detect_format, read_foreign
from calibration.report.output import output_problem
from judge.errors import UsageError

if TYPE_CHECKING:
    from judge.app.requests import CalibrateRequest

__all__ = ["FROM_CHOICES", "JudgeSide", "foreign_judge_side"]

FROM_CHOICES = ("promptfoo", "deepeval", "inspect", "ragas")


@dataclass(frozen=True)
class JudgeSide:
    """The request to calibrate, and what was read when the judge side is another tool's
    output (`described`: the mapping and unmapped fields, for the caller to show)."""

    request: CalibrateRequest
    described: str | None = None


def foreign_judge_side(request: CalibrateRequest) -> JudgeSide:
    """When `judge_labels` is another tool's output, a request naming a label file staged
    from it in the report folder (scores only: `judge_field` score). Otherwise `request`."""
    path = request.judge_labels
    if path is None or not Path(path).is_file():
        return JudgeSide(request)
    try:
        tool = request.from_tool or detect_format(Path(path))
        foreign = None if tool is None else read_foreign(Path(path), tool, request.foreign_metric)
    except (CalibrationInputError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if foreign is None:
        return JudgeSide(request)
    names = _pass_names(request.pass_labels)
    described = foreign.describe()
    judge_field = request.judge_field
    if not any("label" in row for row in foreign.rows) and judge_field == "label":
        judge_field = "score"  # Ragas: scores only
    folder = Path(request.output)
    if output_problem(folder, folder=True) is not None:
        return JudgeSide(request, described)  # calibrate says what is wrong with -o
    staged = _stage(foreign, folder / f"judge-side.{tool}.jsonl", judge_field, names)
    return JudgeSide(replace(request, judge_labels=staged, judge_field=judge_field), described)


def _stage(foreign: ForeignRows, staged: Path, judge_field: str, names: dict[str, str]) -> Path:
    """The converted rows, kept beside the report: they are what was calibrated."""
    staged.parent.mkdir(parents=True, exist_ok=True)
    with staged.open("w", encoding="utf-8") as out:
        for row in foreign.rows:
            if "label" in row:
                row = {**row, "label": names.get(row["label"], row["label"])}
            # a row with no verdict (an error, Inspect's partial credit) is excluded and
            # counted by calibration, never read as a pass or a fail
            out.write(json.dumps({judge_field: None, **row}) + "\n")
    return staged


def _pass_names(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    names = [v.strip() for v in text.split(",")]
    if len(names) != 2 or not all(names):
        raise UsageError(f"--pass-labels takes PASS,FAIL (two names), got {text!r}")
    return {"pass": names[0], "fail": names[1]}
