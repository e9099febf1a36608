"""Runs for the viewer's tests, made by the rules judge: a base run of examples/cases.jsonl,
a candidate whose answers were changed (some cases get worse, some better, two fail to
parse), a RAG pass, and people's labels with notes."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.cli import main
from tests.helpers import REPO

CASES = REPO / "examples" / "cases.jsonl"
RAG_CASES = REPO / "examples" / "rag" / "cases.jsonl"
TOKEN = "view-test-token-0123456789abcdef"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@dataclass
class Runs:
    root: Path
    cases: Path
    base: Path
    candidate: Path
    rag: Path
    labels: Path


def make_runs(root: Path) -> Runs:
    """root/cases.jsonl and root/base/faithfulness.jsonl (its cases found in the parent
    folder); root/candidate/cases.jsonl and faithfulness.jsonl (answers changed, two
    records turned into parse errors; its cases beside it); root/rag/ (a two-rubric pass,
    its cases beside it) and root/labels.csv (people's labels, with notes)."""
    root.mkdir(parents=True, exist_ok=True)
    cases = read_jsonl(CASES)
    write_jsonl(root / "cases.jsonl", cases)
    changed = []
    for i, case in enumerate(cases):
        case = dict(case)
        if i % 5 == 0:  # worse: a claim the contexts do not hold
            case["answer"] = case["answer"] + " It also comes with a free 99-year warranty."
        elif i % 7 == 0 and case.get("contexts"):  # better: the first context, verbatim
            case["answer"] = case["contexts"][0]
        changed.append(case)
    (root / "base").mkdir()
    (root / "candidate").mkdir()
    candidate_cases = write_jsonl(root / "candidate" / "cases.jsonl", changed)
    base = root / "base" / "faithfulness.jsonl"
    candidate = root / "candidate" / "faithfulness.jsonl"
    grade(root / "cases.jsonl", base)
    grade(candidate_cases, candidate)
    records = read_jsonl(candidate)
    for record in records[1:3]:  # two replies that did not parse
        record.update(status="parse_error", score=None, label=None, verdict=None)
        record.update(raw="{not json", error="reply is not JSON")
    write_jsonl(candidate, records)
    rag = root / "rag"
    rag_cases = write_jsonl(root / "rag-cases.jsonl", read_jsonl(RAG_CASES))
    code = main(
        ["grade", str(rag_cases), "--rubric", "retrieval,faithfulness", "-o", str(rag), "--offline"]
    )
    assert code == 0
    rag_cases.rename(rag / "cases.jsonl")  # beside the pass: its case pages find it
    labels = root / "labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "label", "annotator", "note"])
        for i, record in enumerate(read_jsonl(base)):
            if record["status"] != "ok" or i % 3 == 2:
                continue
            flipped = {"faithful": "unfaithful", "unfaithful": "faithful"}[record["label"]]
            label = record["label"] if i % 4 else flipped
            writer.writerow([record["id"], label, "ana", f"note on {record['id']}"])
    return Runs(root, root / "cases.jsonl", base, candidate, rag, labels)


def grade(cases: Path, out: Path) -> None:
    code = main(["grade", str(cases), "--rubric", "faithfulness", "-o", str(out), "--offline"])
    assert code == 0
