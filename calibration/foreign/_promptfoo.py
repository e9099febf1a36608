"""promptfoo's results JSON (`promptfoo eval -o results.json`, format version 3).

A result per test and prompt/provider: `testCase.vars`, `success`, `score`,
`gradingResult.{pass, score, reason, componentResults}`, `namedScores`. The id is the
test's `vars.id` (or `testCase.metadata.id`, else `test-N` from `testIdx`); `label` is
`success` (pass/fail), `score` is `score`. With `--metric NAME` the score and label are
that named score's (`namedScores`) and the component result of that metric. A result that
errored (`failureReason` 2: the provider or a grader failed) has neither: calibration
excludes and counts it; a failed assertion is `failureReason` 1, its reason in `error`
(read from promptfoo 0.123.1's files). A file of several prompts or providers is refused:
each is a judge of its own. A field of the wrong kind (`namedScores` not an object, a
`promptIdx` that is not a number) is an error naming the file and the result.
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

READ = {"testIdx", "testCase", "vars", "success", "score", "gradingResult", "namedScores",
        "failureReason"}  # fmt: skip
ERROR = 2  # promptfoo's ResultFailureReason.ERROR (0 none, 1 an assertion failed)


def is_promptfoo(data: Any) -> bool:
    results = data.get("results") if isinstance(data, dict) else None
    return isinstance(results, dict) and isinstance(results.get("results"), list)


Result = tuple[str, str, dict[str, Any]]  # where it is (for messages), its id, the result


def _results(path: Path) -> tuple[dict[str, Any], list[Result]]:
    """The results table, and each result (an object) with its test's id and the place
    that names it in messages (its index and that id)."""
    data = load_json(path)
    if not is_promptfoo(data):
        raise ForeignFormatError(f"{path}: not promptfoo results JSON (no results.results list)")
    results: list[Result] = []
    for index, result in enumerate(data["results"]["results"]):
        if isinstance(result, dict):
            where = f"results.results[{index}]"
            case_id = _case_id(path, where, result, len(results))
            results.append((f"{where} (test {case_id})", case_id, result))
    return data["results"], results


def _named_scores(path: Path, where: str, result: dict[str, Any]) -> dict[str, Any]:
    return as_object(path, f"{where}: namedScores", result.get("namedScores"))


def promptfoo_metrics(path: Path) -> list[str | None]:
    """None (the overall `score`), then every named score."""
    _, results = _results(path)
    return [None, *sorted({n for w, _, r in results for n in _named_scores(path, w, r)})]


def read_promptfoo(path: Path, metric: str | None = None) -> ForeignRows:
    table, results = _results(path)
    _one_column(path, table, results)
    named = sorted({n for w, _, r in results for n in _named_scores(path, w, r)})
    chosen = pick_metric(path, "promptfoo", named, metric) if metric else None
    rows, unmapped = [], set()
    for where, case_id, result in results:
        unmapped |= {k for k in result if k not in READ}
        row: dict[str, Any] = {"id": case_id}
        if result.get("failureReason") == ERROR:
            rows.append({**row, "status": "error"})  # no verdict: the run failed on it
            continue
        if chosen is None:
            label, score = pass_label(result.get("success")), number(result.get("score"))
        else:
            label = _component(path, where, result, chosen)
            score = number(_named_scores(path, where, result).get(chosen))
        if label is not None:
            row["label"] = label
        if score is not None:
            row["score"] = score
        rows.append(row)
    if len(named) > (1 if chosen else 0):
        unmapped.add("namedScores (" + ", ".join(n for n in named if n != chosen) + ")")
    unmapped.add("gradingResult.reason")
    if chosen is None:
        mapped = {"id": "testCase.vars.id", "label": "success", "score": "score"}
    else:
        mapped = {
            "id": "testCase.vars.id",
            "label": "gradingResult.componentResults[metric].pass",
            "score": f"namedScores.{chosen}",
        }
    return ForeignRows("promptfoo", path, unique_ids(path, rows), mapped, sorted(unmapped), chosen)


def _one_column(path: Path, table: dict[str, Any], results: list[Result]) -> None:
    """One judge per file: promptfoo grades every test once per prompt x provider (each a
    `results.prompts[]` entry, `promptIdx` in a result), and those are different judges."""
    for where, _, result in results:
        index = result.get("promptIdx")
        if not (index is None or isinstance(index, int | str)) or isinstance(index, bool):
            raise ForeignFormatError(
                f"{path}: {where}: promptIdx is {kind_of(index)}, not a number"
            )
    columns = sorted({r.get("promptIdx") for _, _, r in results}, key=str)
    if len(columns) < 2:
        return
    listed = table.get("prompts")
    prompts: list[Any] = listed if isinstance(listed, list) else []
    names = []
    for index in columns:
        entry = prompts[index] if isinstance(index, int) and 0 <= index < len(prompts) else None
        if isinstance(entry, dict):
            names.append(f"{entry.get('provider')} on {entry.get('label')!r}")
        else:
            names.append(f"promptIdx {index}")
    raise ForeignFormatError(
        f"{path}: promptfoo results of {len(columns)} prompt x provider pairs "
        f"({', '.join(names)}): each test is graded once per pair; calibrate one pair's "
        "results (promptfoo eval --filter-providers NAME --filter-prompts PATTERN -o ...)"
    )


def _case_id(path: Path, where: str, result: dict[str, Any], index: int) -> str:
    case = as_object(path, f"{where}: testCase", result.get("testCase"))
    for source in (case.get("vars"), result.get("vars"), case.get("metadata")):
        if isinstance(source, dict) and source.get("id") not in (None, ""):
            return str(source["id"])
    test_index = result.get("testIdx")
    if isinstance(test_index, bool) or not isinstance(test_index, int):
        test_index = index
    return f"test-{test_index + 1}"


def _component(path: Path, where: str, result: dict[str, Any], metric: str) -> str | None:
    """The pass of `metric`'s assertion among the grading result's components."""
    grading = as_object(path, f"{where}: gradingResult", result.get("gradingResult"))
    parts = as_list(
        path, f"{where}: gradingResult.componentResults", grading.get("componentResults")
    )
    for number_, part in enumerate(parts):
        at = f"{where}: gradingResult.componentResults[{number_}]"
        part = as_object(path, at, part)
        if as_object(path, f"{at}.assertion", part.get("assertion")).get("metric") == metric:
            return pass_label(part.get("pass"))
    return None
