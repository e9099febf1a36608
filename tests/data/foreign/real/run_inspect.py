"""Writes inspect/ here: real Inspect eval logs (inspect-ai 0.3.285, see SOURCE.md).

Run from the repository root, in a scratch environment that has Inspect and nothing of
this project (`python -m venv /tmp/ia && /tmp/ia/bin/pip install inspect-ai==0.3.285`):

    /tmp/ia/bin/python tests/data/foreign/real/run_inspect.py

One task over the cases of mock_judge.cases(): the solver's model is Inspect's own
`mockllm/model` answering each question with the case's answer, and the scorer is
Inspect's `model_graded_qa()` whose grader is a second `mockllm/model` answering
`GRADE: C` when mock_judge supports every claim of the answer, else `GRADE: I` (nothing
leaves the machine). `eval()` writes its default `.eval` log; `inspect log convert
--to json` (Inspect's own command) writes the same log as `.json`, shrunk by deleting each sample's `events` (the transcript: 2/5 of the file;
nothing else is changed). `equivalent.csv` is
written from the `EvalLog` that `eval()` returns (Inspect's objects, not the files).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mock_judge  # noqa: E402

CASES = mock_judge.cases()


def _text(messages) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(m.text for m in messages)


def _output(prompt: str, content: str) -> ModelOutput:
    """With its usage set, so that mockllm does not count tokens with tiktoken (whose
    encoding file it would download)."""
    output = ModelOutput.from_content("mockllm/model", content)
    tokens = (len(prompt) // 4, len(content) // 4)
    output.usage = ModelUsage(
        input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=sum(tokens)
    )
    return output


def answer(messages, tools, tool_choice, config) -> ModelOutput:  # type: ignore[no-untyped-def]
    """The solver's model: the case's answer to its question."""
    text = _text(messages)
    (case,) = [c for c in CASES if c["question"] in text]
    return _output(text, case["answer"])


def grade(messages, tools, tool_choice, config) -> ModelOutput:  # type: ignore[no-untyped-def]
    """The grader: C when every claim of the answer is supported by the contexts."""
    text = _text(messages)
    case = mock_judge.case_in(text, CASES)
    letter = "C" if all(mock_judge.verdicts(case)) else "I"
    return _output(text, f"The answer was checked.\nGRADE: {letter}")


@task
def faithfulness() -> Task:
    samples = [
        Sample(
            id=case["id"],
            input="Context:\n" + "\n".join(case["contexts"]) + f"\n\nQuestion: {case['question']}",
            target="Every claim of the answer is supported by the context.",
        )
        for case in CASES
    ]
    grader = get_model("mockllm/model", custom_outputs=grade)
    return Task(dataset=samples, solver=generate(), scorer=model_graded_qa(model=grader))


def main() -> None:
    out = HERE / "inspect"
    shutil.rmtree(out, ignore_errors=True)
    (log,) = eval(
        faithfulness(),
        model="mockllm/model",
        model_args={"custom_outputs": answer},
        log_dir=str(out),
        display="none",
    )
    with (out / "equivalent.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "scorer", "value"])
        for sample in log.samples or []:
            for name, score in (sample.scores or {}).items():
                writer.writerow([sample.id, name, score.value])
    (written,) = out.glob("*.eval")
    written.rename(out / "faithfulness.eval")
    subprocess.run(
        [str(Path(sys.executable).with_name("inspect")), "log", "convert", "--to", "json",
         "--output-dir", str(out / "json"), str(out / "faithfulness.eval")],
        check=True,
    )  # fmt: skip
    (converted,) = (out / "json").glob("*.json")
    log_json = json.loads(converted.read_text())
    for sample in log_json["samples"]:  # shrunk: 830 kB whole, the events are 2/5 of it
        del sample["events"]
    (out / "faithfulness.json").write_text(json.dumps(log_json, indent=2) + "\n")
    converted.unlink()
    (out / "json").rmdir()


if __name__ == "__main__":
    main()
