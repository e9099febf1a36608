"""The judge options with `--jury` (each reaches every juror, or is refused):
`judge.app.jury_options`, re-exported for the commands."""

from __future__ import annotations

from judge.app.jury_options import REFUSED_WITH_JURY, check_jury_judge_options, panel_configs

__all__ = ["REFUSED_WITH_JURY", "check_jury_judge_options", "panel_configs"]
