"""The three judge-vs-human sets the calibration cross-checks use, as files and as 0/1 arrays.

FaithBench with GPT-4o (pass = ``consistent``), LLMBar Natural with GPT-4 (order-1 verdict
against gold; pass = ``B``, the class the report picks for two labels it cannot read) and
the project's ``examples/`` faithfulness labels against the offline rules judge's records
(pass = ``faithful``; cases either side marked ``abstained`` are not pass/fail cases).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judge import Judge, JudgeConfig

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "calibration"
EXAMPLES = REPO / "examples"


@dataclass(frozen=True)
class LabelledSet:
    """Files (judge, human) and the pass/fail arrays of the cases both sides judged."""

    name: str
    judge_file: Path
    human_file: Path
    ids: list[str]
    judge: np.ndarray  # 1 = the judge passed the case
    human: np.ndarray  # 1 = people passed the case


def read_csv_labels(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as handle:
        return {row["id"]: row["label"] for row in csv.DictReader(handle)}


def read_jsonl_labels(path: Path) -> dict[str, str | None]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["id"]: row["label"] for row in rows if row["status"] == "ok"}


def _arrays(name, judge_file, human_file, judge, human, positive, negative) -> LabelledSet:
    ids = [i for i in human if human[i] in (positive, negative) and judge.get(i) is not None]
    ids = [i for i in ids if judge[i] in (positive, negative)]
    return LabelledSet(
        name,
        judge_file,
        human_file,
        ids,
        np.array([judge[i] == positive for i in ids], dtype=int),
        np.array([human[i] == positive for i in ids], dtype=int),
    )


def faithbench() -> LabelledSet:
    folder = DATA / "faithbench-gpt4o"
    judge, human = folder / "judge.csv", folder / "human.csv"
    labels = read_csv_labels(judge), read_csv_labels(human)
    return _arrays("faithbench", judge, human, *labels, "consistent", "hallucinated")


def llmbar() -> LabelledSet:
    folder = DATA / "llmbar-natural-gpt4"
    judge, human = folder / "judge_order1.csv", folder / "gold.csv"
    labels = read_csv_labels(judge), read_csv_labels(human)
    return _arrays("llmbar", judge, human, *labels, "B", "A")


def grade_examples_offline(out: Path) -> Path:
    """The rules judge's faithfulness records for ``examples/cases.jsonl``, written to ``out``."""
    cases = [json.loads(line) for line in (EXAMPLES / "cases.jsonl").read_text().splitlines()]
    records = Judge(JudgeConfig(use_cache=False)).grade_many(cases, "faithfulness")
    out.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return out


def examples(records: Path) -> LabelledSet:
    human_file = EXAMPLES / "human_labels.csv"
    judge, human = read_jsonl_labels(records), read_csv_labels(human_file)
    return _arrays("examples", records, human_file, judge, human, "faithful", "unfaithful")


# The keys DESIGN.md "Calibration output" fixes for calibration.json.
DESIGN_KEYS = frozenset(
    {"n", "unmatched", "labels", "observed_agreement", "expected_agreement", "kappa"}
    | {"kappa_ci95", "weighted_kappa", "confusion_matrix", "per_class", "readiness"}
)


def hanna_ratings(*, named: bool = False) -> list[tuple[str, str, int]]:
    """HANNA's relevance ratings, ``(id, annotator, rating)``. ``named=True`` drops some
    deterministically, as named annotators who each rate part of the items leave them
    (item u of the sorted ids loses rater3 when u % 3 == 0, rater2 when u % 5 == 0 and
    rater1 when u % 7 == 0): 0 to 3 ratings an item."""
    text = (DATA / "hanna-relevance" / "humans_long.csv").read_text(encoding="utf-8")
    rows = [line.split(",") for line in text.split()[1:]]
    index = {case_id: u for u, case_id in enumerate(sorted({r[0] for r in rows}))}
    drop = {"rater3": 3, "rater2": 5, "rater1": 7}
    return [
        (case_id, rater, int(value))
        for case_id, rater, value in rows
        if not (named and index[case_id] % drop[rater] == 0)
    ]
