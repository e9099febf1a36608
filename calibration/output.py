"""Write a calibration result: ``calibration.json`` (strict JSON: undefined values are
``null``), ``report.md`` and, with categories, ``confusion.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.jsonout import to_strict_json, write_strict_json

__all__ = ["write_report"]


def write_report(result: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``calibration.json``, ``report.md`` and (with categories) ``confusion.png``."""
    from calibration.markdown import render_markdown
    from calibration.plot import plot_confusion

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
