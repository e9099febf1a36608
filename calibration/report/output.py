"""Write a calibration result: ``calibration.json`` (strict JSON: undefined values are
``null``), ``report.md`` and, with categories, ``confusion.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.io.jsonout import to_strict_json, write_strict_json

__all__ = ["output_problem", "write_report"]


def output_problem(path: str | Path, *, folder: bool) -> str | None:
    """Why ``path`` cannot be written as a folder (``folder=True``) or a file, or ``None``.

    Checked before any input is read, so a wrong ``-o`` costs nothing: an existing file
    where a folder is wanted (or the reverse), or a file where a parent folder should be.
    """
    target = Path(path)
    if target.exists() or target.is_symlink():
        if folder and not target.is_dir():
            return f"{target} exists and is not a folder; give a folder for the report"
        if not folder and target.is_dir():
            return f"{target} is a folder; give a file name"
    for parent in target.parents:
        if parent.exists():
            return None if parent.is_dir() else f"{parent} is a file, not a folder"
    return None


def write_report(result: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``calibration.json``, ``report.md`` and (with categories) ``confusion.png``."""
    from calibration.report._markdown import render_markdown
    from calibration.report._plot import plot_confusion

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    strict = to_strict_json(result)
    paths = [out / "calibration.json", out / "report.md"]
    write_strict_json(paths[0], strict)
    paths[1].write_text(render_markdown(strict), encoding="utf-8")
    matrix = strict.get("confusion_matrix")
    if matrix:
        paths.append(plot_confusion(matrix["labels"], matrix["matrix"], out / "confusion.png"))
    return paths
