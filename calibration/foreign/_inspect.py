"""Inspect's eval logs: a `.eval` log (Inspect's default: a zip of `header.json` and
`samples/<id>_epoch_<n>.json`; inspect-ai 0.3.285 compresses them with zstd) or a `.json` log
(`--log-format json`, or `inspect log convert --to json`), as inspect-ai 0.3.285 writes them.
A `.eval` log's members are read with bounds (`_zip`: a zip bomb is refused).

Each sample: `id`, `epoch`, `scores` (scorer name -> `{value, answer, explanation}`). The id
is the sample's `id`; with one scorer (or `--metric NAME`) the value gives `score` by
Inspect's own reading (`C` correct 1, `I` incorrect 0, `P` partial 0.5, `N` no answer 0,
numbers and booleans as they are) and `label` pass for `C` / true, fail for `I` / false
(partial and no-answer values get no label: excluded and counted). A sample that errored
unscored is a row of status `error`. Epochs after the first are left unmapped. A sample that
is not an object, or whose `scores` is not one, is an error naming the file and the sample.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from calibration.foreign._common import (
    FAIL,
    PASS,
    ForeignFormatError,
    ForeignRows,
    as_list,
    as_object,
    kind_of,
    load_json,
    number,
    parse_json,
    pick_metric,
    unique_ids,
)
from calibration.foreign._zip import bounded_members

LETTER_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
LETTER_LABELS = {"C": PASS, "I": FAIL}
READ = {"id", "epoch", "scores"}
KEPT = ("id", "epoch", "scores", "error")  # what the rows need; the rest only its keys
EMPTY: tuple[Any, ...] = (None, [], {}, "")


def is_inspect(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


def inspect_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a `.json` or `.eval` log, each cut to what the readers use (`_slim`)."""
    if _is_zip(path):
        members = bounded_members(path, lambda name: name.startswith("samples/"))
        return [_slim(path, name, parse_json(path, name, data)) for name, data in members]
    data = load_json(path)
    if not is_inspect(data):
        raise ForeignFormatError(f"{path}: not an Inspect eval log (no eval and samples)")
    samples = as_list(path, "samples", data.get("samples"))
    return [_slim(path, f"samples[{i}]", sample) for i, sample in enumerate(samples)]


def _is_zip(path: Path) -> bool:
    try:
        return zipfile.is_zipfile(path)
    except OSError as exc:
        raise ForeignFormatError(f"{path}: cannot be read ({exc})") from None


def _slim(path: Path, where: str, sample: Any) -> dict[str, Any]:
    """The sample's id, epoch, error and scores (each score's value, the other fields only
    named), and every other non-empty field only named: a log's transcripts are not kept."""
    if not isinstance(sample, dict):
        raise ForeignFormatError(f"{path}: {where}: the sample is {kind_of(sample)}, not an object")
    slim: dict[str, Any] = {k: True for k in sample if k not in KEPT and sample[k] not in EMPTY}
    slim.update({k: sample[k] for k in KEPT if k in sample})
    scores = as_object(path, f"{where}: scores", sample.get("scores"))
    slim["scores"] = {name: _slim_score(score) for name, score in scores.items()}
    return slim


def _slim_score(score: Any) -> Any:
    if not isinstance(score, dict):
        return score  # no value to read: the sample gets no label
    slim = {k: True for k, v in score.items() if k != "value" and v not in (None, {}, "")}
    return {**slim, "value": score["value"]} if "value" in score else slim


def inspect_metrics(path: Path) -> list[str | None]:
    return sorted({name for s in inspect_samples(path) for name in s["scores"]})


def read_inspect(path: Path, metric: str | None = None) -> ForeignRows:
    samples = inspect_samples(path)
    scorers = sorted({name for s in samples for name in s["scores"]})
    chosen = pick_metric(path, "Inspect", scorers, metric)
    rows, later = [], 0
    for sample in samples:
        if sample.get("epoch", 1) != 1:
            later += 1
            continue
        row: dict[str, Any] = {"id": str(sample.get("id"))}
        score = sample["scores"].get(chosen)
        value = score.get("value") if isinstance(score, dict) else None
        if value is None and sample.get("error"):
            row["status"] = "error"  # the sample failed before it was scored
        label, number_ = _reading(value)
        if label is not None:
            row["label"] = label
        if number_ is not None:
            row["score"] = number_
        rows.append(row)
    unmapped = sorted({k for s in samples for k in s if k not in READ and s[k] not in EMPTY})
    unmapped += sorted(
        {f"scores.{k}" for s in samples for v in s["scores"].values()
         if isinstance(v, dict) for k in v if k != "value" and v[k] not in (None, {}, "")}
    )  # fmt: skip
    unmapped += [f"scores ({', '.join(s for s in scorers if s != chosen)})"] * (len(scorers) > 1)
    if later:
        unmapped.append(f"{later} samples of epochs after the first")
    mapped = {
        "id": "samples.id",
        "label": f"scores.{chosen}.value",
        "score": f"scores.{chosen}.value",
    }
    return ForeignRows("inspect", path, unique_ids(path, rows), mapped, unmapped, chosen)


def _reading(value: Any) -> tuple[str | None, float | None]:
    if isinstance(value, bool):
        return (PASS if value else FAIL), float(value)
    if isinstance(value, str) and value in LETTER_SCORES:
        return LETTER_LABELS.get(value), LETTER_SCORES[value]
    return None, number(value)
