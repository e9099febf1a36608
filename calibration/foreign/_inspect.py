"""Inspect's eval logs: a `.eval` log (Inspect's default: a zip of `header.json` and
`samples/<id>_epoch_<n>.json`; inspect-ai 0.3.285 compresses them with zstd) or a `.json` log
(`--log-format json`, or `inspect log convert --to json`), as inspect-ai 0.3.285 writes them.
Zip members in zstd (method 93) are read by Python 3.14's zipfile, or else through
`zstandard` (`pip install 'llm-judge[inspect]'`).

Each sample: `id`, `epoch`, `scores` (scorer name -> `{value, answer, explanation}`). The id
is the sample's `id`; with one scorer (or `--metric NAME`) the value gives `score` by
Inspect's own reading (`C` correct 1, `I` incorrect 0, `P` partial 0.5, `N` no answer 0,
numbers and booleans as they are) and `label` pass for `C` / true, fail for `I` / false
(partial and no-answer values get no label: excluded and counted). A sample that errored
unscored is a row of status `error`. Epochs after the first are left unmapped.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
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

ZSTD = 93  # the zip compression method Inspect writes
LETTER_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
LETTER_LABELS = {"C": PASS, "I": FAIL}
READ = {"id", "epoch", "scores"}


def is_inspect(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


def inspect_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a `.json` or `.eval` log."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = sorted(
                (i for i in archive.infolist() if i.filename.startswith("samples/")),
                key=lambda i: i.filename,
            )
            try:
                return [json.loads(_member(path, archive, i)) for i in members]
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ForeignFormatError(f"{path}: a sample is not JSON ({exc})") from None
    data = load_json(path)
    if not is_inspect(data):
        raise ForeignFormatError(f"{path}: not an Inspect eval log (no eval and samples)")
    return [s for s in data.get("samples") or [] if isinstance(s, dict)]


def _member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One member's bytes; a zstd member that this Python's zipfile cannot read is
    decompressed with `zstandard` from its raw bytes (after the local file header:
    30 bytes, then the name and the extra field, APPNOTE 4.3.7)."""
    try:
        return archive.read(info)
    except NotImplementedError:
        if info.compress_type != ZSTD:
            raise ForeignFormatError(
                f"{path}: {info.filename} uses zip compression method {info.compress_type}, "
                "which cannot be read here"
            ) from None
    try:
        import zstandard
    except ImportError:
        raise ForeignFormatError(
            f"{path}: this Inspect log is zstd-compressed; reading it needs Python 3.14 or "
            "zstandard (pip install 'llm-judge[inspect]')"
        ) from None
    with path.open("rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise ForeignFormatError(f"{path}: {info.filename} has no local file header")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        handle.seek(info.header_offset + 30 + name_length + extra_length)
        raw = handle.read(info.compress_size)
    try:
        data = bytes(zstandard.ZstdDecompressor().decompressobj().decompress(raw))
    except zstandard.ZstdError as exc:
        raise ForeignFormatError(f"{path}: {info.filename} is not valid zstd ({exc})") from None
    if zlib.crc32(data) != info.CRC:  # what zipfile checks on the members it reads itself
        raise ForeignFormatError(f"{path}: {info.filename} fails its CRC-32 check")
    return data


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
        if value is None and sample.get("error"):
            row["status"] = "error"  # the sample failed before it was scored
        label, number_ = _reading(value)
        if label is not None:
            row["label"] = label
        if number_ is not None:
            row["score"] = number_
        rows.append(row)
    unmapped = sorted(
        {k for s in samples for k in s if k not in READ and s[k] not in (None, [], {}, "")}
    )
    unmapped += sorted(
        {f"scores.{k}" for s in samples for v in (s.get("scores") or {}).values()
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
