"""Errors raised by the calibration package.

`calibration/` stays independent of the grading engine, so it carries its own small error
type; the engine's error tree can subclass or wrap it at the CLI edge.
"""

from __future__ import annotations

from pathlib import Path


class CalibrationInputError(ValueError):
    """A label file, or an option about one, cannot be used.

    The message names the file, the line (1-based, where one applies) and what is wrong;
    the same evidence is kept on the instance for callers that want it structured.
    """

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(f"{where}{message}")
