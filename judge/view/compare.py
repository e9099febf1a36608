"""Two runs compared for the viewer: the metrics exactly as `judge compare` computes them
(judge.report.compare.compare_runs over judge.report.foreign_runs.read_any_run, which
judge.app.compare.compare_systems calls, with the command's defaults), and which cases
moved, from the two indexes joined in DuckDB.

**The family.** A run is one records file, and a pass folder holds several (one a
rubric): `judge compare PASS_A PASS_B` tests every metric of every rubric both passes
graded, and Holm's correction runs over all of them. So the viewer compares what the
command would be given: the two runs' folders when they are distinct folders the command
reads as runs, else the two files. Its p-values are then the command's for the same runs,
and the metrics table lists the whole family.

**Refused:** runs of different rubrics (the command finds no metric both have, and the
cases that "moved" would compare unrelated scores). The notes the command gives (other
rubric versions, other judges, files skipped) are shown as it gives them.

A case **regressed** when both records are `ok` with a score and the candidate's score is
lower than the base's by more than calibration.compare.runs.TIE_TOLERANCE (the sign
test's own notion of a tie); **improved** when higher. Cases that are not `ok` on either
side are listed apart (`not_ok`, with both statuses), and ids one run lacks are counted
and listed (`only_base`, `only_candidate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.compare.runs import TIE_TOLERANCE
from calibration.inference.intervals import DEFAULT_RESAMPLES
from judge.errors import JudgeError, UsageError
from judge.report.compare import compare_runs
from judge.report.foreign_runs import read_any_run
from judge.rubric import RubricLibrary
from judge.view.query import Engine

MAX_LISTED = 100_000  # ids listed per list; counts are always whole


def metrics(
    base: Path, candidate: Path, library: RubricLibrary
) -> tuple[list[dict[str, Any]], list[str]]:
    """Per metric: both means, the paired difference (candidate - base) with its bootstrap
    95% interval, the sign test's p and Holm's corrected p, as `judge compare` gives them
    for the runs' passes (or files); and the comparison's notes, the family first."""
    result, family = None, ""
    if base.parent != candidate.parent:
        try:
            result = _judge_compare(base.parent, candidate.parent, library)
            family = f"judge compare {base.parent} {candidate.parent}"
        except JudgeError:  # not runs the command reads (two files of one rubric...)
            result = None
    try:
        if result is None:
            result = _judge_compare(base, candidate, library)
            family = f"judge compare {base} {candidate}"
    except JudgeError as exc:  # a Parquet table, or runs with no metric in common
        return [], [str(exc)]
    out = [
        {
            "name": name,
            "base": entry["a"],
            "candidate": entry["b"],
            "diff": entry["diff"],
            "ci95": entry["ci95"],
            "p": entry["p_adjusted"],
            "p_value": entry["p_value"],
            "significant": entry["significant"],
            "n": entry["n"],
            "wins": entry["wins"],
            "ties": entry["ties"],
            "losses": entry["losses"],
        }
        for name, entry in result["metrics"].items()
    ]
    tests = f"Holm's correction over the {result['tests']} tests of `{family}`"
    return out, [tests, *result["comparisons"][0]["notes"]]


def _judge_compare(a: Path, b: Path, library: RubricLibrary) -> dict[str, Any]:
    """`judge compare A B --json`'s result, as judge.app.compare.compare_systems makes it
    with the command's defaults (--alpha 0.05, --resamples DEFAULT_RESAMPLES, --seed 0)."""
    runs = [read_any_run(path, library, None) for path in (a, b)]
    result = compare_runs(runs, alpha=0.05, n_resamples=DEFAULT_RESAMPLES, seed=0)
    if not result["tests"]:
        raise UsageError("no metric both runs have; compare runs graded with the same rubrics")
    return result


def moved_cases(engine: Engine, base: Path, candidate: Path) -> dict[str, Any]:
    """Regressed, improved, not-ok and one-sided ids (in the base run's order)."""
    a, b = engine.alias(base), engine.alias(candidate)
    moved = f"""CASE WHEN a.status <> 'ok' OR b.status <> 'ok' OR a.score IS NULL
            OR b.score IS NULL THEN 'not_ok'
        WHEN b.score < a.score - {TIE_TOLERANCE!r} THEN 'regressed'
        WHEN b.score > a.score + {TIE_TOLERANCE!r} THEN 'improved' END"""
    cursor = engine.cursor()
    try:
        paired = cursor.execute(
            f"SELECT count(*) FROM {a}.records a JOIN {b}.records b ON a.id = b.id"
        ).fetchone()
        rows = cursor.execute(
            f"""SELECT * FROM (SELECT a.id, {moved} AS moved, a.status, b.status, a.pos
            FROM {a}.records a JOIN {b}.records b ON a.id = b.id) WHERE moved IS NOT NULL
            ORDER BY pos"""
        ).fetchall()
        only_base = _ids(
            cursor,
            f"SELECT id FROM {a}.records WHERE id NOT IN (SELECT id FROM {b}.records) ORDER BY pos",
        )
        only_candidate = _ids(
            cursor,
            f"SELECT id FROM {b}.records WHERE id NOT IN (SELECT id FROM {a}.records) ORDER BY pos",
        )
    finally:
        cursor.close()
    regressed = [row[0] for row in rows if row[1] == "regressed"]
    improved = [row[0] for row in rows if row[1] == "improved"]
    not_ok = [{"id": r[0], "base": r[2], "candidate": r[3]} for r in rows if r[1] == "not_ok"]
    total = int(paired[0]) if paired else 0
    return {
        "paired": total,
        "regressed": regressed[:MAX_LISTED],
        "improved": improved[:MAX_LISTED],
        "counts": {
            "regressed": len(regressed),
            "improved": len(improved),
            "unchanged": total - len(regressed) - len(improved) - len(not_ok),
            "not_ok": len(not_ok),
            "only_base": len(only_base),
            "only_candidate": len(only_candidate),
        },
        "not_ok": not_ok[:MAX_LISTED],
        "only_base": only_base[:MAX_LISTED],
        "only_candidate": only_candidate[:MAX_LISTED],
    }


def _ids(cursor: Any, sql: str) -> list[str]:
    return [row[0] for row in cursor.execute(sql).fetchall()]
