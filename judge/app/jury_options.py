"""The judge options of a jury job: each one reaches every juror, or is refused.

A juror's file names its model and key, and may give its endpoint, concurrency, rate caps
and sampling; every judge option the command line gives is the default of each juror for
what its file leaves out (`judge.jury.config.juror_config`), and the options that cannot
mean anything for a panel are refused here, by name. Nothing is silently dropped.
"""

from __future__ import annotations

from judge.app.judging import REFUSED_WITH_JURY, check_jury_judge_options, panel_configs

__all__ = ["REFUSED_WITH_JURY", "check_jury_judge_options", "panel_configs"]
