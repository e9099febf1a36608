"""Inspect's eval logs: a `.json` log (`--log-format json`) or a `.eval` log (a zip of
`header.json` and `samples/*.json`), as `inspect eval` writes them.

Each sample: `id`, `epoch`, `scores` (scorer name -> `{value, answer, explanation}`). The id
is the sample's `id`; with one scorer (or `--metric NAME`) the value gives `score` by
Inspect's own reading (`C` correct 1, `I` incorrect 0, `P` partial 0.5, `N` no answer 0,
numbers and booleans as they are) and `label` pass for `C` / true, fail for `I` / false
(partial and no-answer values get no label). Epochs after the first are left unmapped.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from calibration.foreign._common import (
    FAIL,
    PASS,
    ForeignFormatError,
    ForeignRows,
    load_json,
    number,
    pick_metric,
    unique_ids,
)

LETTER_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
LETTER_LABELS = {"C": PASS, "I": FAIL}


def is_inspect(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


def inspect_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a `.json` or `.eval` log."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if n.startswith("samples/"))
            try:
                return [json.loads(archive.read(n)) for n in names]
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ForeignFormatError(f"{path}: a sample is not JSON ({exc})") from None
    data = load_json(path)
    if not is_inspect(data):
        raise ForeignFormatError(f"{path}: not an Inspect eval log (no eval and samples)")
    return [s for s in data.get("samples") or [] if isinstance(s, dict)]


def inspect_metrics(path: Path) -> list[str | None]:
    return sorted({name for s in inspect_samples(path) for name in (s.get("scores") or {})})


def read_inspect(path: Path, metric: str | None = None) -> ForeignRows:
    samples = inspect_samples(path)
    scorers = sorted({name for s in samples for name in (s.get("scores") or {})})
    chosen = pick_metric(path, "Inspect", scorers, metric)
    rows, later = [], 0
    for sample in samples:
        if sample.get("epoch", 1) != 1:
            later += 1
            continue
        row: dict[str, Any] = {"id": str(sample.get("id"))}
        score = (sample.get("scores") or {}).get(chosen)
        value = score.get("value") if isinstance(score, dict) else None
        label, number_ = _reading(value)
        if label is not None:
            row["label"] = label
        if number_ is not None:
            row["score"] = number_
        rows.append(row)
    unmapped = ["scores.answer", "scores.explanation", "input", "target", "messages", "output"]
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
