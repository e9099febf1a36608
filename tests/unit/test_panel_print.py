"""The jury's printed panel is robust to what the summary holds (issue 37): a figure that
is missing, null, nan or under another key is left out or found, never printed as `None`
or `nan`, and every number is rounded."""

from __future__ import annotations

import math
import re
from typing import Any

from judge.cli._panel_print import panel_lines

LEAKS = re.compile(r"\bNone\b|\bnan\b|\d+\.\d{4,}")


def panel(**agreement: Any) -> dict[str, Any]:
    return {
        "mode": "full",
        "outcomes": {"majority": 3, "unanimous": 6, "no_majority": 1},
        "votes": {"3 of 3": 10},
        "agreement": {"jurors": ["a", "b", "c"], "cases": 10, **agreement},
        "cost": {"total_usd": None},
    }


def test_a_renamed_n_eff_with_an_interval_is_found_and_rounded() -> None:
    lines = panel_lines(
        panel(krippendorff_alpha=0.61263, n_eff_verdicts=1.378187, n_eff_verdicts_ci95=[1.1, 2.0]),
        max_tokens=[64],
    )
    text = "\n".join(lines)
    assert "9 of 10 cases decided: 1 no majority" in text
    assert "alpha 0.613" in text and "n_eff 1.378 (95% [1.100, 2.000]) of 3" in text
    assert not LEAKS.search(text), text


def test_missing_null_and_nan_figures_are_left_out() -> None:
    figures = panel(krippendorff_alpha=math.nan, krippendorff_alpha_ci95=[None, 0.5], n_eff=None)
    figures["vs_humans"] = {
        "members": {"a": {"kappa": 0.41234, "kappa_ci95": [0.2, math.nan]}, "b": {"kappa": None}},
        "best_juror": "a",
        "panel_vs_best": {"verdict": "no_difference"},  # no McNemar block: a new method
        "error_correlation": {},
        "cost_ratio": 1.992933,
    }
    text = "\n".join(panel_lines(figures, max_tokens=[64]))
    assert "alpha" not in text and "n_eff" not in text
    assert "a 0.412" in text and "b none" in text
    assert "panel vs best juror a: no_difference" in text and "cost x1.99" in text
    assert not LEAKS.search(text), text


def test_nothing_decided_prints_no_figure() -> None:
    figures = panel(krippendorff_alpha=0.5, n_eff=2.0)
    figures["outcomes"] = {"short": 10}
    figures["vs_humans"] = {"members": {"a": {"kappa": 0.0}}, "best_juror": "a"}
    text = "\n".join(panel_lines(figures, max_tokens=[64]))
    assert "0 of 10 cases decided: 10 short" in text
    assert "alpha" not in text and "kappa" not in text and "best juror" not in text
