"""The output checks and locks live in the application layer (`judge.app.outputs`); the
commands import them from here as before."""

from __future__ import annotations

from judge.app.outputs import Output, check_outputs, require_inputs, same_file

__all__ = ["Output", "check_outputs", "require_inputs", "same_file"]
