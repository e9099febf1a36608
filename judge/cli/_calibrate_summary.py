"""The few lines ``judge calibrate`` prints (``judge.report.calibrate_text`` words them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from judge.report.calibrate_text import summary_lines

__all__ = ["print_summary"]


def print_summary(result: dict[str, Any], paths: list[Path], out: TextIO) -> None:
    """Print the summary of a calibration result to ``out``."""
    print("\n".join(summary_lines(result, paths)), file=out)
