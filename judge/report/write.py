"""Write a report file atomically (a reader never sees half a report)."""

from __future__ import annotations

import os
from pathlib import Path


def write_html(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path
