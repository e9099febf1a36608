"""promptfoo's results JSON (`promptfoo eval -o results.json`, format version 3).

A result per test and prompt/provider: `testCase.vars`, `success`, `score`,
`gradingResult.{pass, score, reason, componentResults}`, `namedScores`. The id is the
test's `vars.id` (or `testCase.metadata.id`, else `test-N` from `testIdx`); `label` is
`success` (pass/fail), `score` is `score`. With `--metric NAME` the score and label are
that named score's (`namedScores`) and the component result of that metric. A result that
errored (`failureReason` 2: the provider or a grader failed) has neither: calibration
excludes and counts it; a failed assertion is `failureReason` 1, its reason in `error`
(read from promptfoo 0.123.1's files). A file of several prompts or providers is refused:
each is a judge of its own.
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

READ = {"testIdx", "testCase", "vars", "success", "score", "gradingResult", "namedScores",
        "failureReason"}  # fmt: skip
ERROR = 2  # promptfoo's ResultFailureReason.ERROR (0 none, 1 an assertion failed)


def is_promptfoo(data: Any) -> bool:
    results = data.get("results") if isinstance(data, dict) else None
    return isinstance(results, dict) and isinstance(results.get("results"), list)


def promptfoo_metrics(path: Path) -> list[str | None]:
    """None (the overall `score`), then every named score."""
    data = load_json(path)
    if not is_promptfoo(data):
        raise ForeignFormatError(f"{path}: not promptfoo results JSON (no results.results list)")
    results = [r for r in data["results"]["results"] if isinstance(r, dict)]
    return [None, *sorted({n for r in results for n in (r.get("namedScores") or {})})]


def read_promptfoo(path: Path, metric: str | None = None) -> ForeignRows:
    data = load_json(path)
    if not is_promptfoo(data):
        raise ForeignFormatError(f"{path}: not promptfoo results JSON (no results.results list)")
    results = [r for r in data["results"]["results"] if isinstance(r, dict)]
    _one_column(path, data["results"], results)
    named = sorted({n for r in results for n in (r.get("namedScores") or {})})
    chosen = pick_metric(path, "promptfoo", named, metric) if metric else None
    rows, unmapped = [], set()
    for index, result in enumerate(results):
        unmapped |= {k for k in result if k not in READ}
        row: dict[str, Any] = {"id": _case_id(result, index)}
        if result.get("failureReason") == ERROR:
            rows.append({**row, "status": "error"})  # no verdict: the run failed on it
            continue
        if chosen is None:
            label, score = pass_label(result.get("success")), number(result.get("score"))
        else:
            label, score = _component(result, chosen), number(result["namedScores"].get(chosen))
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


def _one_column(path: Path, table: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """One judge per file: promptfoo grades every test once per prompt x provider (each a
    `results.prompts[]` entry, `promptIdx` in a result), and those are different judges."""
    columns = sorted({r.get("promptIdx") for r in results}, key=str)
    if len(columns) < 2:
        return
    listed = table.get("prompts")
    prompts: list[Any] = listed if isinstance(listed, list) else []
    names = []
    for index in columns:
        entry = prompts[index] if isinstance(index, int) and index < len(prompts) else None
        if isinstance(entry, dict):
            names.append(f"{entry.get('provider')} on {entry.get('label')!r}")
        else:
            names.append(f"promptIdx {index}")
    raise ForeignFormatError(
        f"{path}: promptfoo results of {len(columns)} prompt x provider pairs "
        f"({', '.join(names)}): each test is graded once per pair; calibrate one pair's "
        "results (promptfoo eval --filter-providers NAME --filter-prompts PATTERN -o ...)"
    )


def _case_id(result: dict[str, Any], index: int) -> str:
    case = result.get("testCase") or {}
    for source in (case.get("vars"), result.get("vars"), case.get("metadata")):
        if isinstance(source, dict) and source.get("id") not in (None, ""):
            return str(source["id"])
    test_index = result.get("testIdx")
    return f"test-{(test_index if isinstance(test_index, int) else index) + 1}"


def _component(result: dict[str, Any], metric: str) -> str | None:
    grading = result.get("gradingResult") or {}
    for part in grading.get("componentResults") or []:
        assertion = part.get("assertion") or {}
        if isinstance(part, dict) and assertion.get("metric") == metric:
            return pass_label(part.get("pass"))
    return None
