"""What `judge grade --jury` prints about its panel, after the summary table.

No figure from nothing: a figure that is missing, null or not finite is left out (or its
absence said), every number is rounded, and when the panel decided no case none of its
agreement or calibration figures is printed; the first line says what happened instead
("0 of 2 cases decided: 2 cut off at --max-tokens 20"). The figures are found by what
they are (a number, an interval) rather than tied to every key of the summary, so a
statistic that gains an interval or loses a key prints what it has.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judge.app.panel import CUT_OFF, DECIDED, decided_count, scan_records, undecided_causes


def print_panel(panel: dict[str, Any], *, max_tokens: Sequence[int]) -> None:
    """The panel's lines on stdout; `max_tokens`: the jurors', to name in a cut-off."""
    for line in panel_lines(panel, max_tokens):
        print(line, file=sys.stdout)


def panel_lines(panel: dict[str, Any], max_tokens: Sequence[int]) -> list[str]:
    outcomes: dict[str, int] = panel.get("outcomes") or {}
    decided, total = decided_count(outcomes), sum(outcomes.values())
    head = f"panel: {decided} of {total} cases decided"
    if decided < total:
        head += f": {_causes(panel, max_tokens)}"
    votes = ", ".join(f"{k}: {n}" for k, n in (panel.get("votes") or {}).items())
    lines = [f"{head}; votes {votes}" if votes else head]
    if decided:
        lines.append(_agreement(panel))
    else:
        lines.append("  no agreement or calibration figure: no case was decided")
    lines += _cost(panel.get("cost") or {})
    humans = panel.get("vs_humans")
    if humans and decided:
        lines.append(_humans(humans))
    return [line for line in lines if line]


def number(value: Any, digits: int = 3) -> str | None:
    """A figure for the terminal, rounded; None for a missing, null or non-finite one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}" if math.isfinite(value) else None


def interval(value: Any, digits: int = 3) -> str | None:
    """`[lo, hi]`, rounded; None unless both bounds are finite numbers."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    low, high = (
        number(v if isinstance(v, float) else float(v), digits) if number(v) else None
        for v in value
    )
    return f"[{low}, {high}]" if low and high else None


def _with_interval(name: str, value: Any, ci: Any) -> str | None:
    shown = number(value)
    if shown is None:
        return None
    bounds = interval(ci)
    return f"{name} {shown}" + (f" (95% {bounds})" if bounds else "")


def _causes(panel: dict[str, Any], max_tokens: Sequence[int]) -> str:
    records = panel.get("records")
    path = Path(records) if records else None
    causes = undecided_causes(d for _, d in scan_records(path)) if path and path.exists() else {}
    if not causes:
        outcomes = panel.get("outcomes") or {}
        undecided = ((o, n) for o, n in outcomes.items() if n and o not in DECIDED)
        return ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in undecided)
    return ", ".join(f"{n} {_cause(c, max_tokens)}" for c, n in causes.items())


def _cause(cause: str, max_tokens: Sequence[int]) -> str:
    if cause == CUT_OFF:
        limits = sorted(set(max_tokens))
        where = f"--max-tokens {limits[0]}" if len(limits) == 1 else "each juror's max_tokens"
        return f"cut off at {where} (raise it)"
    if cause.startswith("failed:"):
        return f"short of votes ({cause.split(':', 1)[1]})"
    return cause.replace("_", " ")


def _agreement(panel: dict[str, Any]) -> str:
    agreement = panel.get("agreement") or {}
    where = {"cyclic": "the overlap", "escalate": "the escalated cases"}.get(str(panel.get("mode")))
    graded = panel.get("graded_by") or {}
    graded = (
        ", ".join(f"{k} {v}" for k, v in graded.items()) if isinstance(graded, dict) else graded
    )
    parts: list[str | None] = []
    if where:
        parts.append(f"graded by {graded}; agreement on {where} ({agreement.get('cases')} cases)")
    alpha = agreement.get("krippendorff_alpha")
    parts.append(_with_interval("alpha", alpha, agreement.get("krippendorff_alpha_ci95")))
    share = number(agreement.get("unanimous_share"))
    parts.append(f"unanimous {share}" if share else None)
    parts.append(_n_eff(agreement))
    shown = [p for p in parts if p]
    return "  " + "; ".join(shown) if shown else "  no agreement figure (see the summary)"


def _n_eff(agreement: Mapping[str, Any]) -> str | None:
    """The effective number of independent jurors, under whatever key holds it."""
    key = next((k for k in agreement if k.startswith("n_eff") and number(agreement[k])), None)
    if key is None:
        return None
    jurors = len(agreement.get("jurors") or [])
    text = _with_interval("n_eff", agreement[key], agreement.get(f"{key}_ci95"))
    return f"{text} of {jurors}" if jurors else text


def _cost(cost: Mapping[str, Any]) -> list[str]:
    total = cost.get("total_usd")
    if number(total) is None:
        return []
    spent = ", ".join(
        f"{n} ${j['cost_usd']:.4f}"
        for n, j in (cost.get("jurors") or {}).items()
        if number(j.get("cost_usd"))
    )
    per_case = cost.get("per_case_usd")
    each = f", ${per_case:.6f} a case" if number(per_case) else ""
    requests = number(cost.get("requests_per_case"), 2)
    asked = f"; {requests} requests a case" if requests else ""
    return [f"cost: ${total:.4f} ({spent}){each}{asked}"]


def _humans(humans: Mapping[str, Any]) -> str:
    if "skipped" in humans:
        return f"vs people: none ({humans['skipped']})"
    members = humans.get("members") or {}
    figures = []
    for name, m in members.items():
        kappa = number(m.get("kappa"))
        if kappa is None or m.get("coverage") == 0:
            figures.append(f"{name} none (no labelled case decided)")
            continue
        bounds = interval(m.get("kappa_ci95"))
        figures.append(f"{name} {kappa}" + (f" {bounds}" if bounds else ""))
    parts = [f"vs people (kappa, 95%): {', '.join(figures)}"] if figures else []
    best = humans.get("best_juror")
    best_ok = best in members and number(members[best].get("kappa")) is not None
    versus = humans.get("panel_vs_best") or {}
    if best_ok and versus.get("verdict"):
        p = (versus.get("mcnemar") or {}).get("p_value")
        test = f" (McNemar p {p:.3g})" if number(p) else ""
        parts.append(f"panel vs best juror {best}: {versus['verdict']}{test}")
    mean = number((humans.get("error_correlation") or {}).get("mean"))
    if mean:
        parts.append(f"errors' mean correlation {mean}")
    ratio = number(humans.get("cost_ratio"), 2)
    if ratio:
        parts.append(f"cost x{ratio}")
    return "; ".join(parts)
