"""What ``judge gate`` shows: the figures a gate can name, the verdict line, the terminal
lines and the Markdown report for CI."""

from __future__ import annotations

from typing import Any

from calibration.agreement.small_sample import SMALL_SAMPLE

__all__ = [
    "GATE_METRIC_NAMES",
    "gate_figures",
    "gate_undefined_reasons",
    "render_gate_markdown",
    "terminal_lines",
    "verdict_line",
]

GATE_METRIC_NAMES: tuple[str, ...] = tuple(
    sorted(
        [
            "n",
            "kappa_difference",
            "kappa_difference_ci95_low",
            "kappa_difference_ci95_high",
            "kappa_drop",
            "accuracy_difference",
            "mcnemar_p",
            "flip_rate",
            *(
                f"{side}_{name}"
                for side in ("baseline", "candidate")
                for name in ("kappa", "kappa_ci95_low", "kappa_ci95_high", "accuracy")
            ),
        ]
    )
)


def _bound(ci: Any, i: int) -> Any:
    return ci[i] if ci else None


def gate_figures(result: dict[str, Any]) -> dict[str, Any]:
    """Every name of :data:`GATE_METRIC_NAMES` with its value (``None`` when undefined).
    ``kappa_drop`` is baseline minus candidate: positive when the candidate is worse."""
    diff = result["difference"]
    out: dict[str, Any] = {
        "n": result["n"],
        "kappa_difference": diff["kappa"],
        "kappa_difference_ci95_low": _bound(diff["kappa_ci95"], 0),
        "kappa_difference_ci95_high": _bound(diff["kappa_ci95"], 1),
        "kappa_drop": -diff["kappa"],
        "accuracy_difference": diff["accuracy"],
        "mcnemar_p": result["mcnemar"]["p_value"],
        "flip_rate": result["flips"]["rate"],
    }
    for side in ("baseline", "candidate"):
        figures = result[side]
        out[f"{side}_kappa"] = figures["kappa"]
        out[f"{side}_kappa_ci95_low"] = _bound(figures["kappa_ci95"], 0)
        out[f"{side}_kappa_ci95_high"] = _bound(figures["kappa_ci95"], 1)
        out[f"{side}_accuracy"] = figures["accuracy"]
    return out


def gate_undefined_reasons(result: dict[str, Any]) -> dict[str, str]:
    """Why a figure is undefined where the comparison says: no bootstrap intervals."""
    if result["bootstrap"]["resamples"]:
        return {}
    return {name: "no interval (--bootstrap 0)" for name in GATE_METRIC_NAMES if "_ci95_" in name}


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "undefined"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _ci(ci: Any) -> str:
    if not ci or ci[0] is None or ci[0] != ci[0]:
        return "no interval"
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


_WORDS = {
    "worse": "the candidate is significantly worse than the baseline",
    "better": "the candidate is significantly better than the baseline",
    "no_difference": "no significant difference between the candidate and the baseline",
}


def verdict_line(result: dict[str, Any]) -> str:
    """One sentence: the verdict and the figures it rests on."""
    b, c, d = result["baseline"], result["candidate"], result["difference"]
    m = result["mcnemar"]
    return (
        f"{_WORDS[result['verdict']]}: kappa {_num(c['kappa'])} vs {_num(b['kappa'])} "
        f"(difference {_num(d['kappa'])}, 95% CI {_ci(d['kappa_ci95'])}; McNemar exact "
        f"p = {m['p_value']:.3g}, {m['candidate_only_correct']} cases only the candidate got "
        f"right, {m['baseline_only_correct']} only the baseline); "
        f"{result['flips']['rate']:.1%} of verdicts flipped ({result['n']} cases)"
        + (f"; verdict from {result['verdict_basis']}" if result["n"] < SMALL_SAMPLE else "")
    )


def _side_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for side in ("baseline", "candidate"):
        f = result[side]
        rows.append(
            [
                side,
                _num(f["kappa"]),
                _ci(f["kappa_ci95"]),
                _num(f["accuracy"]),
                _ci(f["accuracy_ci95"]),
            ]
        )
    d = result["difference"]
    rows.append(
        ["candidate - baseline", _num(d["kappa"]), _ci(d["kappa_ci95"]), _num(d["accuracy"]), "—"]
    )
    return rows


def terminal_lines(result: dict[str, Any]) -> list[str]:
    lines = [f"{'':22} {'kappa':>7}  {'95% CI':<18} {'accuracy':>8}"]
    for name, kappa, ci, accuracy, _ in _side_rows(result):
        lines.append(f"{name:22} {kappa:>7}  {ci:<18} {accuracy:>8}")
    lines.append(f"verdict: {verdict_line(result)}")
    gate = result["gate"]
    lines.append(f"gate: {'FAILED (exit 3)' if gate['failed'] else 'passed'}")
    lines += [f"  - {check}" for check in gate["checks"]]
    return lines


def render_gate_markdown(result: dict[str, Any]) -> str:
    """The comparison as Markdown (``result`` in strict-JSON form)."""
    gate = result["gate"]
    files = result["files"]
    header = "| judge | kappa | 95% interval | accuracy | 95% interval |\n|---|---|---|---|---|"
    table = "\n".join("| " + " | ".join(row) + " |" for row in _side_rows(result))
    m = result["mcnemar"]
    lines = [
        f"# Judge gate: {'FAILED' if gate['failed'] else 'passed'}",
        "",
        f"**{verdict_line(result)}**",
        "",
        *(f"- `{check}`" for check in gate["checks"]),
        "",
        f"- baseline: `{files['baseline']}`; candidate: `{files['candidate']}`; "
        f"human labels: `{files['labels']}`",
        f"- {result['n']} cases labelled by people and graded by both judges; labels: "
        f"{', '.join(result['labels'])}",
        "",
        header,
        table,
        "",
        f"Intervals: percentile bootstrap, {result['bootstrap']['resamples']} resamples "
        f"(seed {result['bootstrap']['seed']}), the same resampled cases for both judges "
        "and the difference. Accuracy: Wilson intervals.",
        "",
        f"McNemar's exact test on per-case correctness: {m['candidate_only_correct']} cases "
        f"only the candidate got right, {m['baseline_only_correct']} only the baseline; "
        f"p = {m['p_value']:.4g} (alpha {m['alpha']:g}).",
        "",
        f"Verdicts that flipped: {result['flips']['n']} of {result['n']} "
        f"({result['flips']['rate']:.1%}); the ids are in the JSON output.",
    ]
    return "\n".join(lines) + "\n"
