"""The two-by-two diagnosis: a retrieval signal crossed with a generation signal, per case.

A RAG system is two systems, and an average hides which one failed: a good retriever with a
bad generator averages like the reverse. So each case gets a retrieval signal (e.g. recall@k
from a `retrieval` rubric, or context relevance when no ids are labelled) and a generation
signal (faithfulness, correctness), each **high** when its score is at or above a threshold,
and lands in one cell:

| retrieval | generation | cell               | what to do                                         |
|-----------|------------|--------------------|----------------------------------------------------|
| low       | high       | `retriever_broken` | fix the retriever                                  |
| high      | low        | `generator_broken` | fix the generator                                  |
| low       | low        | `both_broken`      | retriever first: generation on bad context is noise |
| high      | high       | `healthy`          | ship it; watch for regressions                     |

Which rubric gives a signal is the kind's `signal` (never its name). When several rubrics of
a pass give the same signal, the order of `--rubric` decides, case by case: the first one
listed that scored the case (status `ok` with a score) gives it, so a `retrieval` rubric
listed before `context_relevance` is used wherever ids were labelled and context relevance
elsewhere. A case with no score for one of the signals is `unclassified` (counted, listed).
Thresholds are each kind's (`Kind.threshold`), or the one given for the whole signal.

Reference: ../shared/reference, "Evaluating RAG: separate your retrieval metrics from your
generation metrics", section "Reading the two-by-two".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.engine.records import scan_records
from judge.rubric import Rubric

SIGNALS = ("retrieval", "generation")
# cell -> (retrieval, generation, what it means)
CELLS: dict[str, tuple[str, str, str]] = {
    "retriever_broken": (
        "low",
        "high",
        "retriever broken: the right context did not arrive; fix the retriever "
        "(chunking, embeddings, a reranker)",
    ),
    "generator_broken": (
        "high",
        "low",
        "generator broken: the context was there and the answer did not use it well; fix "
        "the generator (prompt, model, context stuffing)",
    ),
    "both_broken": (
        "low",
        "low",
        "both low: fix the retriever first; a generator on bad context tells you nothing, so "
        "re-measure generation once retrieval is good",
    ),
    "healthy": ("high", "high", "healthy: both halves work; watch for regressions"),
}
RULE = (
    "per case, the first rubric listed in --rubric with that signal that scored the case "
    "(status ok with a score)"
)


@dataclass(frozen=True)
class SignalSource:
    """A rubric that gives one signal, with its threshold (score >= threshold is high)."""

    ref: str
    signal: str
    threshold: float


def signal_sources(
    rubrics: Sequence[Rubric], thresholds: Mapping[str, float | None] | None = None
) -> dict[str, list[SignalSource]]:
    """The rubrics giving each signal, in the order listed, asked of their kind. A
    threshold in `thresholds` (by signal) replaces every such rubric's own."""
    chosen = thresholds or {}
    out: dict[str, list[SignalSource]] = {s: [] for s in SIGNALS}
    for rubric in rubrics:
        kind = rubric.behaviour
        if kind.signal in out:
            given = chosen.get(kind.signal)
            value = kind.threshold(rubric) if given is None else given
            out[kind.signal].append(SignalSource(rubric.ref, kind.signal, value))
    return out


Row = tuple[str, Sequence[str], Mapping[str, Mapping[str, Any]]]


def _pick(
    sources: Sequence[SignalSource], records: Mapping[str, Mapping[str, Any]]
) -> tuple[SignalSource, str] | None:
    """The first source that scored the case, and whether its score is high or low."""
    for source in sources:
        record = records.get(source.ref) or {}
        score = record.get("score")
        if record.get("status") == "ok" and isinstance(score, int | float):
            return source, "high" if score >= source.threshold else "low"
    return None


def cell_of(retrieval: str, generation: str) -> str:
    return next(name for name, (r, g, _) in CELLS.items() if (r, g) == (retrieval, generation))


class _Counts:
    def __init__(self) -> None:
        self.cells: Counter[str] = Counter()
        self.unclassified = 0

    def result(self) -> dict[str, Any]:
        classified = sum(self.cells.values())
        cells = {
            name: {
                "count": self.cells[name],
                "rate": round(self.cells[name] / classified, 6) if classified else None,
            }
            for name in CELLS
        }
        return {"classified": classified, "unclassified": self.unclassified, "cells": cells}


def diagnose(rows: Iterable[Row], sources: Mapping[str, Sequence[SignalSource]]) -> dict[str, Any]:
    """Count each case into its cell, overall and per slice, and list the ids in each.

    `rows` yields (case id, slices, {rubric ref: record}) for every case; `sources` is
    `signal_sources(...)`. Rates are over the classified cases of the group. The result
    names the rubrics, thresholds and rule behind each signal, and how many cases each
    rubric gave."""
    overall, slices = _Counts(), dict[str, _Counts]()
    ids: dict[str, list[str]] = {name: [] for name in [*CELLS, "unclassified"]}
    used: dict[str, Counter[str]] = {s: Counter() for s in SIGNALS}
    for case_id, case_slices, records in rows:
        retrieval = _pick(sources.get("retrieval", ()), records)
        generation = _pick(sources.get("generation", ()), records)
        groups = [overall, *(slices.setdefault(n, _Counts()) for n in case_slices)]
        if retrieval is None or generation is None:
            ids["unclassified"].append(case_id)
            for group in groups:
                group.unclassified += 1
            continue
        used["retrieval"][retrieval[0].ref] += 1
        used["generation"][generation[0].ref] += 1
        cell = cell_of(retrieval[1], generation[1])
        ids[cell].append(case_id)
        for group in groups:
            group.cells[cell] += 1
    result = overall.result()
    for name, (r_level, g_level, meaning) in CELLS.items():
        result["cells"][name] |= {
            "retrieval": r_level,
            "generation": g_level,
            "meaning": meaning,
            "ids": ids[name],
        }
    return {
        "signals": {s: _described(sources.get(s, ()), used[s]) for s in SIGNALS},
        "rule": RULE,
        **result,
        "unclassified_ids": ids["unclassified"],
        "by_slice": {name: counts.result() for name, counts in sorted(slices.items())},
    }


def _described(sources: Sequence[SignalSource], used: Counter[str]) -> list[dict[str, Any]]:
    return [{"rubric": s.ref, "threshold": s.threshold, "cases": used[s.ref]} for s in sources]


def aligned_rows(files: Mapping[str, Path]) -> Iterator[Row]:
    """(id, slices, {ref: record}) for each case of a pass's records files, which hold one
    record per case in the same input order (`grade_files` finishes them so)."""
    readers = {ref: scan_records(path) for ref, path in files.items()}
    while True:
        records = {ref: next(reader, (0, None))[1] for ref, reader in readers.items()}
        present = {ref: r for ref, r in records.items() if r is not None}
        if not present:
            return
        case_ids = {r["id"] for r in present.values()}
        if len(present) < len(records) or len(case_ids) > 1:
            raise RuntimeError(f"the records files of one pass are not aligned: {dict(files)}")
        first = next(iter(present.values()))
        yield first["id"], list(first.get("slices") or []), present


def diagnose_files(
    files: Mapping[str, Path], sources: Mapping[str, Sequence[SignalSource]]
) -> dict[str, Any] | None:
    """The two-by-two of a pass, or None when it lacks a rubric of either signal."""
    if not all(sources.get(s) for s in SIGNALS):
        return None
    return diagnose(aligned_rows(files), sources)
