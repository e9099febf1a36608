"""Write a report file atomically (a reader never sees half a report)."""

from __future__ import annotations

from pathlib import Path

from judge.engine.atomic import replace_text


def write_html(path: Path, text: str) -> Path:
    return replace_text(path, text)
