"""Gate an answer set in pytest, with llm-judge's plugin (installed with the package).

    pytest examples/pytest                                   # offline rules judge, no key
    JUDGE_MODEL=gpt-4o-2024-08-06 OPENAI_API_KEY=... pytest examples/pytest
    ANSWERS=answers-planted.jsonl pytest examples/pytest     # planted hallucinations: fails

The dataset is graded once per run, through the verdict cache (a rerun sends nothing);
each gate reads the dataset's figures and their 95% intervals, never one verdict.
answers.jsonl: 15 of examples/cases.jsonl that people labelled faithful; in
answers-planted.jsonl, 7 of them have a number changed (`metadata.planted` says which).
"""

from __future__ import annotations

import os
from pathlib import Path

ANSWERS = Path(__file__).parent / os.environ.get("ANSWERS", "answers.jsonl")


def test_answers_are_faithful(grade_dataset, judge_gate):
    result = grade_dataset(ANSWERS, "faithfulness")
    # 15 of 15 faithful: the Wilson interval's lower bound is 0.80
    judge_gate(result, "faithfulness.pass_rate.ci95_low >= 0.75")


def test_every_answer_was_graded(grade_dataset, judge_gate):
    result = grade_dataset(ANSWERS, "faithfulness")  # the same result: graded once per run
    judge_gate(result, "faithfulness.error_rate <= 0.05")
