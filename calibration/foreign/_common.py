"""What every foreign reader returns, and its error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationInputError
from calibration.io.jsontext import loads_bounded

PASS, FAIL = "pass", "fail"
# Another tool's whole log (transcripts, tool-call arguments, the tool's own metadata) nests
# deeper than a case, but never hundreds deep; 256 is far below what exhausts the parser.
MAX_DEPTH = 256


class ForeignFormatError(CalibrationInputError):
    """A file that is not the tool's output it was read as (names the file and field)."""


@dataclass
class ForeignRows:
    """Label rows read from another tool's output: `rows` of `id`, `label` (`pass`/`fail`,
    absent when the tool has no pass field), `score` (absent when it has none), `status`
    `error` where the tool failed on the case (no verdict, so no label); `mapped`
    says which of the tool's fields each came from, `unmapped` names the fields read past."""

    tool: str
    path: Path
    rows: list[dict[str, Any]]
    mapped: dict[str, str]
    unmapped: list[str] = field(default_factory=list)
    metric: str | None = None

    def describe(self) -> str:
        """One paragraph for the terminal: the mapping and the unmapped fields."""
        which = f" (metric {self.metric})" if self.metric else ""
        parts = ", ".join(f"{ours} <- {theirs}" for ours, theirs in self.mapped.items())
        text = f"{self.path}: {self.tool} output{which}, {len(self.rows)} rows: {parts}"
        if self.unmapped:
            text += f"; unmapped: {', '.join(self.unmapped)}"
        return text


def load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ForeignFormatError(f"{path}: cannot be read ({exc})") from None
    return parse_json(path, None, text)


def parse_json(path: Path, where: str | None, text: str | bytes) -> Any:
    """JSON from another tool's file (`where` in it, e.g. a zip member), depth-bounded:
    ForeignFormatError naming the file (and `where`) when it is not JSON or nests deeper
    than MAX_DEPTH."""
    at = f"{path}: {where}" if where else str(path)
    try:
        return loads_bounded(text, max_depth=MAX_DEPTH)
    except json.JSONDecodeError as exc:
        raise ForeignFormatError(f"{at}: not JSON (line {exc.lineno}: {exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise ForeignFormatError(f"{at}: not UTF-8 ({exc.reason})") from None
    except ValueError as exc:  # JsonLimitError: refused before it was parsed
        raise ForeignFormatError(f"{at}: JSON {exc}") from None


def kind_of(value: Any) -> str:
    """A JSON value's kind, as a message names it (`a list`, `a number`, ...)."""
    if value is None:
        return "null"
    kinds = ((bool, "a boolean"), (int | float, "a number"), (str, "a string"),
             (list, "a list"), (dict, "an object"))  # fmt: skip
    return next((name for type_, name in kinds if isinstance(value, type_)), "a value")


def as_object(path: Path, where: str, value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, {} when it is null or absent; any other value is a
    ForeignFormatError naming the file and `where` (the record and field)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ForeignFormatError(f"{path}: {where} is {kind_of(value)}, not an object")
    return value


def as_list(path: Path, where: str, value: Any) -> list[Any]:
    """`value` when it is a JSON list, [] when it is null or absent; else the error."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ForeignFormatError(f"{path}: {where} is {kind_of(value)}, not a list")
    return value


def pass_label(value: Any) -> str | None:
    """`pass` / `fail` for a boolean, None for anything else."""
    if isinstance(value, bool):
        return PASS if value else FAIL
    return None


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def pick_metric(path: Path, tool: str, names: list[str], wanted: str | None) -> str:
    """The metric to read: `wanted` (matched case-insensitively), or the only one there is."""
    if wanted is not None:
        for name in names:
            if name.lower() == wanted.lower():
                return name
        raise ForeignFormatError(
            f"{path}: no {tool} metric {wanted!r}; it has {', '.join(names) or 'none'}"
        )
    if len(names) == 1:
        return names[0]
    raise ForeignFormatError(
        f"{path}: {tool} output with {len(names)} metrics ({', '.join(names) or 'none'}): "
        "choose one with --metric"
    )


def unique_ids(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    for row in rows:
        if row["id"] in seen:
            raise ForeignFormatError(f"{path}: id {row['id']!r} appears twice")
        seen.add(row["id"])
    return rows
