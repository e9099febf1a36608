"""Which tool wrote a file, and the reader for it."""

from __future__ import annotations

import csv
import zipfile
from collections.abc import Callable
from pathlib import Path

from calibration.foreign._common import MAX_DEPTH, ForeignFormatError, ForeignRows
from calibration.foreign._deepeval import deepeval_metrics, is_deepeval, read_deepeval
from calibration.foreign._inspect import inspect_metrics, is_inspect, read_inspect
from calibration.foreign._promptfoo import is_promptfoo, promptfoo_metrics, read_promptfoo
from calibration.foreign._ragas import is_ragas, ragas_metrics, read_ragas
from calibration.io.jsontext import loads_bounded

Reader = Callable[[Path, "str | None"], ForeignRows]
FORMATS: dict[str, Reader] = {
    "promptfoo": read_promptfoo,
    "deepeval": read_deepeval,
    "inspect": read_inspect,
    "ragas": read_ragas,
}
METRICS: dict[str, Callable[[Path], list[str | None]]] = {
    "promptfoo": promptfoo_metrics,
    "deepeval": deepeval_metrics,
    "inspect": inspect_metrics,
    "ragas": ragas_metrics,
}
MAX_SNIFF = 256 * 1024 * 1024


def detect_format(path: Path) -> str | None:
    """The tool that wrote `path` (a key of FORMATS), or None for anything else (a label
    file or this project's records, which the ordinary readers take, and report on when
    they are unreadable: detection itself never fails)."""
    try:
        return _sniff(path)
    except (OSError, ValueError, csv.Error, zipfile.BadZipFile, RecursionError):
        return None  # not UTF-8, not CSV, a broken zip: the ordinary reader says what


def _sniff(path: Path) -> str | None:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return "inspect" if "header.json" in archive.namelist() else None
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader([handle.readline(1 << 20)]), [])
        return "ragas" if is_ragas(header) and "label" not in header else None
    if path.suffix.lower() != ".json" or path.stat().st_size > MAX_SNIFF:
        return None  # JSONL: a label file or records
    # ValueError (not JSON, or nested past the bound): not ours
    data = loads_bounded(path.read_text(encoding="utf-8-sig"), max_depth=MAX_DEPTH)
    for name, test in (("promptfoo", is_promptfoo), ("deepeval", is_deepeval),
                       ("inspect", is_inspect)):  # fmt: skip
        if test(data):
            return name
    return None


def read_foreign(path: Path, tool: str | None = None, metric: str | None = None) -> ForeignRows:
    """Read `path` as `tool`'s output (detected when None); ForeignFormatError when it is
    not one."""
    tool = tool or detect_format(path)
    if tool is None:
        raise ForeignFormatError(
            f"{path}: not promptfoo, DeepEval, Inspect or Ragas output (say which with --from)"
        )
    return FORMATS[tool](path, metric)


def foreign_metrics(path: Path, tool: str) -> list[str | None]:
    """Every metric (scorer, named score, column) `tool`'s output holds; None stands for
    promptfoo's overall score."""
    return METRICS[tool](path)
