"""Public human-labelled sets as case files and label files, to measure a judge against people.

    python -m benchmarks.public_sets DATA public-sets

(DATA: the folder of the public human-labelled sets, as the README's command names it)
reads the upstream dumps in `DATA/external/` (each folder's SOURCE.md names the repository,
commit and licence) and writes, per set, a case file for `judge grade` and the human labels
for `judge calibrate` (README, "The rules judge"):

- `faithbench/`: 750 article summaries (`contexts` = the article, `answer` = the summary)
  from `dev_annotations/`, with the authors' sample drops and annotator choices, and the
  human label by worst pooling (SOURCE.md, "How the authors turn spans into a sample
  label"): Unwanted or Questionable -> `unfaithful`, else `faithful`. The labels equal
  `calibration/faithbench-gpt4o/human.csv` (501 hallucinated, 249 consistent), which is
  checked.
- `llmbar-natural/`, `llmbar-adversarial/`: LLMBar's instruction-following pairs
  (`answer_a` = output_1, `answer_b` = output_2) with the gold winner A or B; adversarial
  pools Neighbor, GPTInst, GPTOut and Manual (319 pairs).
- `topicalchat/`: 359 Topical-Chat responses (`question` = the dialogue so far, `answer` =
  the response, `contexts` = the knowledge fact) with the mean human coherence (1-3) and
  the dialogue as a group; ids and scores equal `calibration/topicalchat-coherence/`.

Nothing here is tuned: the files are the data as the authors label it. FaithBench is CC
BY-NC-SA 4.0: keep the written files local (they are not committed).

From a clone, without DATA: LLMBar (MIT) is vendored under `tests/data/public-sets/` and
read from there when DATA lacks it; FaithBench and Topical-Chat cannot be (their licences,
`tests/data/public-sets/SOURCE.md`), so each one missing is named in one line with where
to get it, the other sets are still written, and the command exits 2.
"""

from __future__ import annotations

import ast
import csv
import json
import sys
from pathlib import Path
from typing import Any

FAITHBENCH_DROPS = {5: range(40, 50), 10: range(10, 20), 11: range(0, 10), 12: range(20, 30)}
FAITHBENCH_DROPS |= {15: range(40, 50)}
FAITHBENCH_CHOSEN = {
    7: {"yujia", "manveer"},
    8: {"chenyu", "miaoran"},
    10: {"erana", "vivek", "manveer"},
    11: {"rogger", "matt"},
    13: {"erana", "miaoran"},
    16: {"miaoran", "matt"},
}
FAITHBENCH_THREE = {2, 3, 4, 5, 10}
LLMBAR_ADVERSARIAL = ("Neighbor", "GPTInst", "GPTOut", "Manual")
SUMMARY_QUESTION = "Summarise the article."


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _read_labels(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [row["label"] for row in csv.DictReader(handle)]


def _annotations(sample: dict[str, Any]) -> list[dict[str, Any]]:
    value = sample.get("annotations") or []
    return ast.literal_eval(value) if isinstance(value, str) else list(value)


def _worst_pooled(batch: int, sample: dict[str, Any]) -> str:
    """The sample's label by worst pooling over its expected annotators (SOURCE.md)."""
    chosen = FAITHBENCH_CHOSEN.get(batch)
    by_annotator: dict[str, set[str]] = {}
    for note in _annotations(sample):
        name = str(note.get("annotator_name", "")).split()[0].lower()
        if chosen is not None and name not in chosen:
            continue
        labels = note.get("label") or []
        by_annotator.setdefault(name, set()).update(labels)
    expected = 3 if batch in FAITHBENCH_THREE else 2
    pooled = set().union(*by_annotator.values()) if by_annotator else set()
    if len(by_annotator) < expected:
        pooled.add("Consistent")
    for label in ("Unwanted", "Questionable", "Benign", "Consistent"):
        if label in pooled:
            return "unfaithful" if label in ("Unwanted", "Questionable") else "faithful"
    return "faithful"


def faithbench(data: Path, out: Path) -> int:
    folder = data / "external" / "faithbench" / "dev_annotations"
    cases, labels = [], []
    for batch in range(1, 17):
        samples = json.loads((folder / f"batch_{batch}_annotation.json").read_text("utf-8"))
        for sample in samples:
            if int(sample["sample_id"]) in FAITHBENCH_DROPS.get(batch, ()):
                continue
            case_id = f"fb-{len(cases):04d}"
            cases.append(
                {
                    "id": case_id,
                    "question": SUMMARY_QUESTION,
                    "contexts": [sample["source"].strip()],
                    "answer": sample["summary"].strip(),
                    "slices": [f"batch-{batch}"],
                    "metadata": {"summarizer": sample.get("meta_model")},
                }
            )
            labels.append([case_id, _worst_pooled(batch, sample)])
    known = data / "calibration" / "faithbench-gpt4o" / "human.csv"
    if known.exists():
        wanted = ["faithful" if x == "consistent" else "unfaithful" for x in _read_labels(known)]
        if wanted != [label for _, label in labels]:
            raise SystemExit(f"FaithBench: the pooled labels differ from {known}")
    _write_jsonl(out / "faithbench" / "cases.jsonl", cases)
    _write_csv(out / "faithbench" / "human.csv", ["id", "label"], labels)
    return len(cases)


def _llmbar_pairs(path: Path, prefix: str) -> tuple[list[dict[str, Any]], list[list[str]]]:
    rows = json.loads(path.read_text("utf-8"))
    cases, gold = [], []
    for i, row in enumerate(rows):
        case_id = f"{prefix}-{i:03d}"
        cases.append(
            {
                "id": case_id,
                "question": row["input"],
                "answer_a": row["output_1"],
                "answer_b": row["output_2"],
                "slices": [prefix],
            }
        )
        gold.append([case_id, "A" if str(row["label"]) == "1" else "B"])
    return cases, gold


def llmbar(data: Path, out: Path) -> int:
    root = data / "external" / "llmbar" / "Dataset" / "LLMBar"
    result = Path("evaluators") / "GPT-4" / "Vanilla_NoRules" / "result.json"
    natural = _llmbar_pairs(root / "Natural" / result, "natural")
    _write_jsonl(out / "llmbar-natural" / "cases.jsonl", natural[0])
    _write_csv(out / "llmbar-natural" / "gold.csv", ["id", "label"], natural[1])
    cases: list[dict[str, Any]] = []
    gold: list[list[str]] = []
    for subset in LLMBAR_ADVERSARIAL:
        more = _llmbar_pairs(root / "Adversarial" / subset / result, subset.lower())
        cases += more[0]
        gold += more[1]
    _write_jsonl(out / "llmbar-adversarial" / "cases.jsonl", cases)
    _write_csv(out / "llmbar-adversarial" / "gold.csv", ["id", "label"], gold)
    return len(natural[0]) + len(cases)


def topicalchat(data: Path, out: Path) -> int:
    path = data / "external" / "topicalchat-closerlook" / "results" / "topical_chat"
    rows = json.loads((path / "gpt3.5_coh_geval.json").read_text("utf-8"))
    dialogues: dict[str, str] = {}
    cases, human = [], []
    for i, row in enumerate(rows):
        dialogue = dialogues.setdefault(row["source"], f"dlg-{len(dialogues):03d}")
        scores = row["scores"]
        scores = ast.literal_eval(scores) if isinstance(scores, str) else scores
        case_id = f"tc-{i:04d}"
        cases.append(
            {
                "id": case_id,
                "question": row["source"].strip(),
                "contexts": [row["context"].strip()],
                "answer": row["system_output"].strip(),
                "slices": [dialogue],
            }
        )
        human.append([case_id, scores["coherence"], dialogue])
    known = data / "calibration" / "topicalchat-coherence" / "human.csv"
    if known.exists():
        with known.open(encoding="utf-8") as handle:
            wanted = [(r["id"], round(float(r["score"]), 6)) for r in csv.DictReader(handle)]
        if wanted != [(i, round(float(s), 6)) for i, s, _ in human]:
            raise SystemExit(f"Topical-Chat: the scores differ from {known}")
    _write_jsonl(out / "topicalchat" / "cases.jsonl", cases)
    _write_csv(out / "topicalchat" / "human.csv", ["id", "score", "dialogue"], human)
    return len(cases)


VENDORED = Path(__file__).resolve().parent.parent / "tests" / "data" / "public-sets"

# Per set: the file whose absence means the upstream dump is not there, and where to get it.
UPSTREAM = {
    "faithbench": (
        Path("external/faithbench/dev_annotations/batch_1_annotation.json"),
        "FaithBench (CC BY-NC-SA 4.0, not in the repository): copy "
        "assign/batch_5_src_no_sports/results/*.json of https://github.com/forrestbao/FaithBench "
        "at 0497b6d into {folder}",
    ),
    "llmbar": (
        Path("external/llmbar/Dataset/LLMBar/Natural"),
        "LLMBar (MIT): copy Dataset/LLMBar of https://github.com/princeton-nlp/LLMBar into {folder}",
    ),
    "topicalchat": (
        Path("external/topicalchat-closerlook/results/topical_chat/gpt3.5_coh_geval.json"),
        "Topical-Chat (no licence upstream, not in the repository): copy "
        "results/topical_chat/gpt3.5_coh_geval.json of "
        "https://github.com/d223302/A-Closer-Look-To-LLM-Evaluation at 9008442 into {folder}",
    ),
}


def llmbar_vendored(data: Path, out: Path) -> int:
    """LLMBar from the copy vendored in the repository (`tests/data/public-sets/llmbar/`:
    the same pairs and gold labels, the evaluators' outputs dropped)."""
    root = VENDORED / "llmbar"
    natural = _llmbar_pairs(root / "Natural" / "dataset.json", "natural")
    _write_jsonl(out / "llmbar-natural" / "cases.jsonl", natural[0])
    _write_csv(out / "llmbar-natural" / "gold.csv", ["id", "label"], natural[1])
    cases: list[dict[str, Any]] = []
    gold: list[list[str]] = []
    for subset in LLMBAR_ADVERSARIAL:
        more = _llmbar_pairs(root / "Adversarial" / subset / "dataset.json", subset.lower())
        cases += more[0]
        gold += more[1]
    _write_jsonl(out / "llmbar-adversarial" / "cases.jsonl", cases)
    _write_csv(out / "llmbar-adversarial" / "gold.csv", ["id", "label"], gold)
    return len(natural[0]) + len(cases)


BUILDS = {"faithbench": faithbench, "llmbar": llmbar, "topicalchat": topicalchat}
FALLBACKS = {"llmbar": llmbar_vendored}


def missing_line(name: str, data: Path) -> str:
    """One line: which upstream file is missing under DATA, and where to get it."""
    return f"{name}: missing {data / UPSTREAM[name][0]}; {_where(name, data)}"


def _where(name: str, data: Path) -> str:
    marker, where = UPSTREAM[name]
    return where.format(folder=(data / marker).parent)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m benchmarks.public_sets DATA_DIR OUT_DIR", file=sys.stderr)
        return 2
    data, out = Path(args[0]), Path(args[1])
    missing = 0
    for name, build in BUILDS.items():
        if (data / UPSTREAM[name][0]).exists():
            try:
                print(f"{name}: {build(data, out)} cases -> {out}")
            except FileNotFoundError as exc:  # a partial copy: name the first file it lacks
                print(f"{name}: missing {exc.filename}; {_where(name, data)}", file=sys.stderr)
                missing += 1
        elif name in FALLBACKS:
            count = FALLBACKS[name](data, out)
            print(f"{name}: {count} cases -> {out} (from {VENDORED / name}, vendored)")
        else:
            print(missing_line(name, data), file=sys.stderr)
            missing += 1
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
