"""Strict JSON out: the one place that turns results into JSON any parser accepts.

Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which strict parsers (and
JSON itself, RFC 8259) refuse. Undefined statistics are ``nan`` in this code by a
documented rule; in a file or an HTTP body they are ``null``. Every command, report and
service response that writes JSON goes through :func:`to_strict_json` (and, for text,
:func:`dumps_strict` or :func:`write_strict_json`), so there is one rule: numpy scalars and
arrays become plain numbers and lists, tuples become lists, keys become text, ``nan`` and
``±inf`` become ``null``; text stays UTF-8 (not ``\\u`` escapes).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["dumps_strict", "to_strict_json", "write_strict_json"]


def to_strict_json(value: Any) -> Any:
    """The value with numpy types made plain and ``nan``/``inf`` made ``None``."""
    if isinstance(value, dict):
        return {str(k): to_strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_strict_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_strict_json(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps_strict(value: Any, *, indent: int | None = 2) -> str:
    """:func:`to_strict_json`, then ``json.dumps`` with ``allow_nan=False`` (a value the
    conversion missed is an error here, not an invalid file later)."""
    return json.dumps(to_strict_json(value), indent=indent, ensure_ascii=False, allow_nan=False)


def write_strict_json(path: str | Path, value: Any) -> Path:
    """Write :func:`dumps_strict` of ``value`` and a newline to ``path`` (UTF-8), making its
    folder; returns the path."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(dumps_strict(value) + "\n", encoding="utf-8")
    return file
