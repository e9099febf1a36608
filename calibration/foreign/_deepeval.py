"""DeepEval's test-run JSON: the `test_run_<time>.json` that `evaluate()` writes into its
`results_folder` (or $DEEPEVAL_RESULTS_FOLDER), a `TestRun` as DeepEval dumps it, and the
`.deepeval/.latest_test_run.json` that `evaluate()` and `deepeval test run` leave in the
working folder, the same `TestRun` under `testRunData` (read from deepeval 4.3.1's files).

`testCases[]`: `name`, `input`, `actualOutput`, `success`, `metricsData[]` of `name`,
`score`, `success`, `threshold`, `reason`, `evaluationModel`, `error`. The id is the test
case's `name` (or `additionalMetadata.id`); with one metric (or `--metric NAME`) `label` is
that metric's `success` (pass/fail) and `score` its `score`. A metric that errored (`error`
set) gives a row of status `error`, with no label: excluded and counted by calibration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.foreign._common import (
    ForeignFormatError,
    ForeignRows,
    load_json,
    number,
    pass_label,
    pick_metric,
    unique_ids,
)

READ = {"name", "additionalMetadata", "metricsData"}


def _test_run(data: Any) -> Any:
    """The `TestRun` itself: `.latest_test_run.json` holds it under `testRunData`."""
    if isinstance(data, dict) and isinstance(data.get("testRunData"), dict):
        return data["testRunData"]
    return data


def is_deepeval(data: Any) -> bool:
    run = _test_run(data)
    return isinstance(run, dict) and isinstance(run.get("testCases"), list)


def _cases(path: Path) -> list[dict[str, Any]]:
    data = _test_run(load_json(path))
    if not is_deepeval(data):
        raise ForeignFormatError(f"{path}: not a DeepEval test run (no testCases list)")
    return [c for c in data["testCases"] if isinstance(c, dict)]


def deepeval_metrics(path: Path) -> list[str | None]:
    cases = _cases(path)
    return sorted({m.get("name") for c in cases for m in c.get("metricsData") or []} - {None})


def read_deepeval(path: Path, metric: str | None = None) -> ForeignRows:
    cases = _cases(path)
    names = sorted({m.get("name") for c in cases for m in c.get("metricsData") or []} - {None})
    chosen = pick_metric(path, "DeepEval", names, metric)
    rows, unmapped = [], set()
    for index, case in enumerate(cases):
        unmapped |= {k for k in case if k not in READ and case[k] not in (None, [], {})}
        row: dict[str, Any] = {"id": _case_id(case, index)}
        data_of = next((m for m in case.get("metricsData") or [] if m.get("name") == chosen), None)
        if data_of is not None and data_of.get("error"):
            row["status"] = "error"
        elif data_of is not None:
            label, score = pass_label(data_of.get("success")), number(data_of.get("score"))
            if label is not None:
                row["label"] = label
            if score is not None:
                row["score"] = score
        rows.append(row)
    others = [n for n in names if n != chosen]
    if others:
        unmapped.add(f"metricsData ({', '.join(others)})")
    unmapped |= {"metricsData.reason", "metricsData.threshold", "metricsData.evaluationModel"}
    mapped = {
        "id": "testCases.name",
        "label": f"metricsData[{chosen}].success",
        "score": f"metricsData[{chosen}].score",
    }
    return ForeignRows("deepeval", path, unique_ids(path, rows), mapped, sorted(unmapped), chosen)


def _case_id(case: dict[str, Any], index: int) -> str:
    extra = case.get("additionalMetadata")
    if isinstance(extra, dict) and extra.get("id") not in (None, ""):
        return str(extra["id"])
    name = case.get("name")
    return str(name) if name not in (None, "") else f"test_case_{index}"
