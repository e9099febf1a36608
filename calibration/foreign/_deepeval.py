"""DeepEval's test-run JSON: the `test_run_<time>.json` that `evaluate()` writes into its
`results_folder` (or $DEEPEVAL_RESULTS_FOLDER), a `TestRun` as DeepEval dumps it, and the
`.deepeval/.latest_test_run.json` that `evaluate()` and `deepeval test run` leave in the
working folder, the same `TestRun` under `testRunData` (read from deepeval 4.3.1's files).

`testCases[]`: `name`, `input`, `actualOutput`, `success`, `metricsData[]` of `name`,
`score`, `success`, `threshold`, `reason`, `evaluationModel`, `error`. The id is the test
case's `name` (or `additionalMetadata.id`); with one metric (or `--metric NAME`) `label` is
that metric's `success` (pass/fail) and `score` its `score`. A metric that errored (`error`
set) gives a row of status `error`, with no label: excluded and counted by calibration.
A `metricsData` that is not a list of objects, or a metric name that is not a string, is an
error naming the file and the test case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.foreign._common import (
    ForeignFormatError,
    ForeignRows,
    as_list,
    as_object,
    kind_of,
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


Case = tuple[str, dict[str, Any], list[dict[str, Any]]]  # its id, the case, its metrics


def _cases(path: Path) -> list[Case]:
    """Each test case (an object) with its id and its `metricsData` (objects, each named by
    a string or not at all)."""
    data = _test_run(load_json(path))
    if not is_deepeval(data):
        raise ForeignFormatError(f"{path}: not a DeepEval test run (no testCases list)")
    cases = [c for c in data["testCases"] if isinstance(c, dict)]
    return [_metrics_of(path, _case_id(case, index), case) for index, case in enumerate(cases)]


def _metrics_of(path: Path, case_id: str, case: dict[str, Any]) -> Case:
    where = f"test case {case_id!r}: metricsData"
    metrics = as_list(path, where, case.get("metricsData"))
    for index, entry in enumerate(metrics):
        name = as_object(path, f"{where}[{index}]", entry).get("name")
        if name is not None and not isinstance(name, str):
            raise ForeignFormatError(
                f"{path}: {where}[{index}].name is {kind_of(name)}, not a string"
            )
    return case_id, case, metrics


def _names(cases: list[Case]) -> list[str]:
    return sorted(
        {str(m["name"]) for _, _, metrics in cases for m in metrics if m.get("name") is not None}
    )


def deepeval_metrics(path: Path) -> list[str | None]:
    names: list[str | None] = [*_names(_cases(path))]
    return names


def read_deepeval(path: Path, metric: str | None = None) -> ForeignRows:
    cases = _cases(path)
    names = _names(cases)
    chosen = pick_metric(path, "DeepEval", names, metric)
    rows, unmapped = [], set()
    for case_id, case, metrics in cases:
        unmapped |= {k for k in case if k not in READ and case[k] not in (None, [], {})}
        row: dict[str, Any] = {"id": case_id}
        data_of = next((m for m in metrics if m.get("name") == chosen), None)
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
