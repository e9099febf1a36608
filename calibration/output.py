"""Write a calibration result: ``calibration.json`` (strict JSON: undefined values are
``null``), ``report.md`` and, with categories, ``confusion.png``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["to_strict_json", "write_report"]


def to_strict_json(value: Any) -> Any:
    """The value with numpy types made plain and ``nan``/``inf`` made ``None``."""
    if isinstance(value, dict):
        return {str(k): to_strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_strict_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_report(result: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``calibration.json``, ``report.md`` and (with categories) ``confusion.png``."""
    from calibration.markdown import render_markdown
    from calibration.plot import plot_confusion

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    strict = to_strict_json(result)
    paths = [out / "calibration.json", out / "report.md"]
    paths[0].write_text(json.dumps(strict, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_markdown(strict), encoding="utf-8")
    matrix = strict.get("confusion_matrix")
    if matrix:
        paths.append(plot_confusion(matrix["labels"], matrix["matrix"], out / "confusion.png"))
    return paths
