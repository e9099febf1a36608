"""`judge compare`'s result: runs paired case by case (`judge.report.runs`), every metric
compared with `calibration.compare.runs` (bootstrap interval, sign test), and Holm's
correction over every test the command makes (metrics, times later runs when more than
two are given: each is compared with the first)."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from calibration.compare.changes import case_changes
from calibration.compare.runs import CORRECTION, P_VALUE_TEST, compare_metrics
from calibration.inference.intervals import DEFAULT_RESAMPLES
from calibration.io.jsonout import to_strict_json
from judge.report.runs import Run, paired

DIRECTION = "diff = mean(B) - mean(A): positive when B, the later run, scores higher"
CHANGES = ("regressed", "improved", "not_comparable")
GATE_FIGURES = ("a", "b", "diff", "ci95_low", "ci95_high", "p_value", "p_adjusted")


def compare_runs(
    runs: Sequence[Run],
    *,
    alpha: float = 0.05,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    only: Sequence[str] = (),
) -> dict[str, Any]:
    """The result `--json` writes (strict JSON: undefined values are null): `metrics` is
    the first comparison's (the whole answer for two runs), `comparisons` every one.
    `only` (glob patterns, e.g. `retrieval.*`) keeps the metrics it matches: fewer tests,
    a smaller family for Holm's correction. Each comparison also lists, per rubric, the
    cases that `regressed`, `improved` and are `not_comparable` (`changes`); the top-level
    lists are the first comparison's, as `metrics` is."""
    baseline, others = runs[0], runs[1:]
    pairs = [_kept(paired(baseline, other), only) for other in others]
    tests = {
        (index, name): values
        for index, (metrics, _) in enumerate(pairs)
        for name, values in metrics.items()
    }
    results = compare_metrics(tests, alpha=alpha, n_resamples=n_resamples, seed=seed)
    comparisons = []
    for index, (other, (metrics, coverage)) in enumerate(zip(others, pairs, strict=True)):
        entries = {name: results[(index, name)] for name in metrics}
        for name, entry in entries.items():
            entry["left_out"] = coverage["left_out"][name]
        comparisons.append(
            {
                "a": baseline.name,
                "b": other.name,
                "metrics": entries,
                "significant": sorted(n for n, e in entries.items() if e["significant"]),
                "cases": coverage["rubrics"],
                "rubrics_only_in_a": coverage["rubrics_only_in_a"],
                "rubrics_only_in_b": coverage["rubrics_only_in_b"],
                "notes": [*coverage["notes"], *baseline.notes, *other.notes],
            }
        )
    result = to_strict_json(
        {
            "runs": [run.name for run in runs],
            "baseline": baseline.name,
            "direction": DIRECTION,
            "p_value_test": P_VALUE_TEST,
            "correction": CORRECTION,
            "tests": len(tests),
            "alpha": alpha,
            "confidence": 0.95,
            "resamples": n_resamples,
            "seed": seed,
            "metrics": comparisons[0]["metrics"],
            "comparisons": comparisons,
        }
    )
    # after the strict copy: case lists hold finite scores only, and a big run's are long
    for comparison, other in zip(result["comparisons"], others, strict=True):
        comparison |= changes(baseline, other, only)
    return result | {key: result["comparisons"][0][key] for key in CHANGES}


def changes(a: Run, b: Run, only: Sequence[str] = ()) -> dict[str, dict[str, list[Any]]]:
    """Per rubric both runs graded (whose `RUBRIC.score` `only` keeps, when given): the
    cases that regressed, improved and could not be compared
    (`calibration.compare.changes.case_changes`), each under its key of CHANGES."""
    out: dict[str, dict[str, list[Any]]] = {key: {} for key in CHANGES}
    for rubric_id, ra in a.rubrics.items():
        rb = b.rubrics.get(rubric_id)
        score = f"{rubric_id}.score"
        if rb is None or (only and not any(fnmatchcase(score, p) for p in only)):
            continue
        found = case_changes(ra.outcomes(), rb.outcomes())
        for key in CHANGES:
            out[key][rubric_id] = found[key]
    return out


def _kept(pair: tuple[dict[str, Any], dict[str, Any]], only: Sequence[str]) -> Any:
    metrics, coverage = pair
    if only:
        metrics = {n: v for n, v in metrics.items() if any(fnmatchcase(n, p) for p in only)}
    return metrics, coverage


def gate_values(comparison: dict[str, Any]) -> dict[str, Any]:
    """The numbers `judge compare --fail-if` reads from one comparison: `METRIC.FIGURE`
    for FIGURE in GATE_FIGURES, and the counts `significant`, `significant_higher`,
    `significant_lower` (B against A)."""
    values: dict[str, Any] = {}
    for name, entry in comparison["metrics"].items():
        figures = {**entry, "ci95_low": entry["ci95"][0], "ci95_high": entry["ci95"][1]}
        values |= {f"{name}.{figure}": figures[figure] for figure in GATE_FIGURES}
    flagged = [e for e in comparison["metrics"].values() if e["significant"]]
    values["significant"] = len(flagged)
    values["significant_higher"] = sum(e["diff"] > 0 for e in flagged)
    values["significant_lower"] = sum(e["diff"] < 0 for e in flagged)
    return values
