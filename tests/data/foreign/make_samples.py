"""Writes the promptfoo, DeepEval and Ragas samples of this folder (see SOURCE.md): the
offline rules judge's faithfulness verdicts on 10 of examples/cases.jsonl, laid out as each
tool writes its output, and the equivalent plain label files. Run from the repository root:
`python tests/data/foreign/make_samples.py`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from judge import Judge

HERE = Path(__file__).parent
IDS = ["returns-001", "returns-002", "returns-005", "billing-002", "billing-004",
       "shipping-001", "shipping-002", "account-002", "account-005", "account-008"]  # fmt: skip


def main() -> None:
    lines = Path("examples/cases.jsonl").read_text().splitlines()
    cases = {c["id"]: c for c in map(json.loads, lines)}
    chosen = [cases[i] for i in IDS]
    records = Judge().grade_many(chosen)
    verdicts = [
        (c, r.score or 0.0, r.label == "faithful", r) for c, r in zip(chosen, records, strict=True)
    ]
    write_promptfoo(verdicts)
    write_deepeval(verdicts)
    write_ragas(verdicts)
    write_inspect(verdicts)
    with (HERE / "equivalent_labels.csv").open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "label", "score"])
        for case, score, passed, _ in verdicts:
            out.writerow([case["id"], "faithful" if passed else "unfaithful", score])


def write_promptfoo(verdicts: list) -> None:
    results = []
    for index, (case, score, passed, _) in enumerate(verdicts):
        reason = "All assertions passed" if passed else "Answer contains an unsupported claim"
        results.append(
            {
                "cost": 0.000412,
                "gradingResult": {
                    "pass": passed,
                    "score": score,
                    "reason": reason,
                    "namedScores": {"faithfulness": score},
                    "tokensUsed": {"total": 412, "prompt": 380, "completion": 32, "cached": 0},
                    "componentResults": [
                        {
                            "pass": passed,
                            "score": score,
                            "reason": reason,
                            "assertion": {
                                "type": "context-faithfulness",
                                "threshold": 1,
                                "metric": "faithfulness",
                            },
                        }
                    ],
                },
                "id": f"0f3a9c1e-6b1d-4c55-9e4a-{index:012d}",
                "latencyMs": 1204 + index,
                "namedScores": {"faithfulness": score},
                "prompt": {"raw": case["question"], "label": "{{question}}"},
                "promptId": "b1946ac92492d2347c6235b4d2611184",
                "promptIdx": 0,
                "provider": {"id": "echo", "label": ""},
                "response": {"output": case["answer"], "cached": False},
                "score": score,
                "success": passed,
                "testCase": {
                    "vars": {
                        "id": case["id"],
                        "question": case["question"],
                        "context": "\n".join(case["contexts"]),
                        "answer": case["answer"],
                    },
                    "assert": [
                        {"type": "context-faithfulness", "threshold": 1, "metric": "faithfulness"}
                    ],
                    "options": {},
                    "metadata": {},
                },
                "testIdx": index,
                "vars": {"id": case["id"], "question": case["question"]},
                "metadata": {},
                "failureReason": 0 if passed else 1,
            }
        )
    passes = sum(v[2] for v in verdicts)
    data = {
        "evalId": "eval-7Qm-2026-11-30T10:12:44",
        "results": {
            "version": 3,
            "timestamp": "2026-11-30T10:12:44.118Z",
            "prompts": [{"raw": "{{question}}", "label": "{{question}}", "provider": "echo"}],
            "results": results,
            "stats": {
                "successes": passes,
                "failures": len(verdicts) - passes,
                "errors": 0,
                "tokenUsage": {"total": 4120, "prompt": 3800, "completion": 320},
            },
        },
        "config": {
            "description": "Northwind support answers: faithfulness",
            "providers": ["echo"],
            "prompts": ["{{question}}"],
        },
        "shareableUrl": None,
    }
    (HERE / "promptfoo_results.json").write_text(json.dumps(data, indent=2) + "\n")


def write_deepeval(verdicts: list) -> None:
    cases = []
    for index, (case, score, passed, _) in enumerate(verdicts):
        reason = (
            "The score is 1.00 because every claim is supported by the retrieval context."
            if passed
            else f"The score is {score:.2f} because a claim is not supported."
        )
        cases.append(
            {
                "name": case["id"],
                "input": case["question"],
                "actualOutput": case["answer"],
                "expectedOutput": None,
                "context": None,
                "retrievalContext": case["contexts"],
                "success": passed,
                "metricsData": [
                    {
                        "name": "Faithfulness",
                        "threshold": 1.0,
                        "success": passed,
                        "score": score,
                        "reason": reason,
                        "strictMode": False,
                        "evaluationModel": "gpt-4o-2024-08-06",
                        "error": None,
                        "evaluationCost": 0.00231,
                        "verboseLogs": "Truths: [...]",
                    },
                    {
                        "name": "Answer Relevancy",
                        "threshold": 0.5,
                        "success": True,
                        "score": 0.92,
                        "reason": "The answer addresses the question.",
                        "strictMode": False,
                        "evaluationModel": "gpt-4o-2024-08-06",
                        "error": None,
                        "evaluationCost": 0.00118,
                        "verboseLogs": "Statements: [...]",
                    },
                ],
                "runDuration": 3.81,
                "evaluationCost": 0.00349,
                "order": index,
                "additionalMetadata": None,
                "comments": None,
                "tags": None,
            }
        )
    data = {
        "testFile": "test_northwind.py",
        "testCases": cases,
        "conversationalTestCases": [],
        "metricsScores": [
            {
                "metric": "Faithfulness",
                "scores": [v[1] for v in verdicts],
                "passes": sum(v[2] for v in verdicts),
                "fails": sum(not v[2] for v in verdicts),
                "errors": 0,
            },
        ],
        "hyperparameters": None,
        "testPassed": sum(v[2] for v in verdicts),
        "testFailed": sum(not v[2] for v in verdicts),
        "runDuration": 41.2,
        "evaluationCost": 0.0349,
    }
    (HERE / "deepeval_test_run.json").write_text(json.dumps(data, indent=2) + "\n")


def write_ragas(verdicts: list) -> None:
    with (HERE / "ragas_result.csv").open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(
            ["user_input", "retrieved_contexts", "response", "faithfulness", "answer_relevancy"]
        )
        for case, score, _, _ in verdicts:
            out.writerow([case["question"], str(case["contexts"]), case["answer"], score, 0.91])


def write_inspect(verdicts: list) -> None:
    samples = []
    for case, _, passed, _ in verdicts:
        samples.append(
            {
                "id": case["id"],
                "epoch": 1,
                "input": case["question"],
                "target": "\n".join(case["contexts"]),
                "messages": [
                    {"role": "user", "content": case["question"], "source": "input"},
                    {"role": "assistant", "content": case["answer"], "source": "generate"},
                ],
                "output": {
                    "model": "openai/gpt-4o-2024-08-06",
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": case["answer"]},
                            "stop_reason": "stop",
                        }
                    ],
                    "usage": {"input_tokens": 212, "output_tokens": 48},
                },
                "scores": {
                    "model_graded_fact": {
                        "value": "C" if passed else "I",
                        "answer": case["answer"],
                        "explanation": "GRADE: C" if passed else "GRADE: I",
                        "metadata": {},
                    }
                },
                "metadata": {"slices": case.get("slices", [])},
                "store": {},
            }
        )
    correct = sum(v[2] for v in verdicts) / len(verdicts)
    header = {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "Fq8w2kZ7",
            "created": "2026-11-30T10:20:31+00:00",
            "task": "northwind_faithfulness",
            "task_version": 0,
            "dataset": {
                "name": "cases",
                "location": "examples/cases.jsonl",
                "samples": len(verdicts),
                "shuffled": False,
            },
            "model": "openai/gpt-4o-2024-08-06",
            "config": {"epochs": 1},
        },
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}]},
        "results": {
            "total_samples": len(verdicts),
            "completed_samples": len(verdicts),
            "scores": [
                {
                    "name": "model_graded_fact",
                    "scorer": "model_graded_fact",
                    "metrics": {"accuracy": {"name": "accuracy", "value": correct}},
                }
            ],
        },
        "stats": {
            "started_at": "2026-11-30T10:20:31+00:00",
            "completed_at": "2026-11-30T10:21:02+00:00",
        },
    }
    (HERE / "inspect_log.json").write_text(
        json.dumps({**header, "samples": samples}, indent=2) + "\n"
    )
    import zipfile

    with zipfile.ZipFile(HERE / "inspect_log.eval", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))


if __name__ == "__main__":
    main()
