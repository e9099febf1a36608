"""What `judge calibrate` prints of a jury's figures (the `jury` block that
`judge.app.calibrate_jury` adds to the result when JUDGE_LABELS is a panel's records)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def jury_lines(result: Mapping[str, Any]) -> list[str]:
    """What `judge calibrate` prints of the `jury` block: every member side by side, the
    panel against its best juror, the errors' correlation and the cost ratio."""
    jury = result.get("jury")
    if jury is None:
        return []
    if "skipped" in jury:
        return [f"jury: skipped: {jury['skipped']}"]
    members = "; ".join(
        f"{name} kappa {_num(m['kappa'])} {_ci(m['kappa_ci95'])}, AC1 {_num(m['ac1'])}"
        for name, m in jury["members"].items()
    )
    versus = jury["panel_vs_best"]
    errors = jury["error_correlation"]
    return [
        f"jury ({jury['mode']}), against people: {members}",
        f"jury: panel vs best juror {jury['best_juror']}: {versus['verdict']} (kappa difference "
        f"{_num(versus['kappa_difference'])}, McNemar p {_num(versus['mcnemar']['p_value'])}); "
        f"errors' mean correlation {_num(errors['mean'])}, n_eff {_num(errors['n_eff'])}; "
        f"cost x{_num(jury['cost_ratio'])}",
    ]


def _num(value: Any) -> str:
    return "undefined" if value is None or value != value else f"{value:.3f}"


def _ci(pair: Any) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]" if pair and None not in pair else "[undefined]"
