"""`judge compare`'s Markdown: one table a comparison, then the cases each side lacks and the
notes. Reads the strict-JSON result (`null` for undefined values); pure text."""

from __future__ import annotations

from typing import Any

__all__ = ["render_compare_markdown"]

MAX_IDS = 10
MAX_CHANGES = 20  # cases named per rubric and list; --json has them all
CHANGE_HEADS = {
    "regressed": "Regressed (both runs ok, B scores lower), largest drop first:",
    "improved": "Improved (both runs ok, B scores higher), largest rise first:",
    "not_comparable": "Not comparable (not ok in one run or both; statuses A, B):",
}


def render_compare_markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Compare runs against {result['baseline']}",
        "",
        f"Paired over the cases both runs scored. {result['direction']}. 95% interval: "
        f"percentile bootstrap over cases ({result['resamples']} resamples, seed "
        f"{result['seed']}). p: {result['p_value_test']}. Significant: {result['correction'].capitalize()}"
        f"-adjusted p < {result['alpha']:g} over all {result['tests']} tests.",
    ]
    for comparison in result["comparisons"]:
        lines += ["", *_comparison(comparison)]
    return "\n".join(lines) + "\n"


def _comparison(comparison: dict[str, Any]) -> list[str]:
    lines = [
        f"## B = {comparison['b']} vs A = {comparison['a']}",
        "",
        "| metric | n | A | B | diff | 95% CI | B wins / ties / losses | p | p (Holm) | "
        "significant | left out |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|",
    ]
    for name, e in comparison["metrics"].items():
        ci = "-" if e["ci95"][0] is None else f"[{e['ci95'][0]:+.3f}, {e['ci95'][1]:+.3f}]"
        flag = (
            ("**yes, higher**" if e["diff"] > 0 else "**yes, lower**") if e["significant"] else "no"
        )
        lines.append(
            f"| {name} | {e['n']} | {_num(e['a'])} | {_num(e['b'])} | {_num(e['diff'], '+.3f')} "
            f"| {ci} | {e['wins']} / {e['ties']} / {e['losses']} | {_num(e['p_value'], '.3g')} "
            f"| {_num(e['p_adjusted'], '.3g')} | {flag} | {e['left_out']} |"
        )
    if not comparison["metrics"]:
        lines.append("| (no metric both runs have) | | | | | | | | | | |")
    lines += ["", "Cases:"]
    for rubric_id, cases in comparison["cases"].items():
        lines.append(
            f"- {rubric_id}: {cases['cases_in_both']} in both; {cases['only_a']} only in A"
            f"{_ids(cases['only_a_ids'], cases['only_a'])}; {cases['only_b']} only in B"
            f"{_ids(cases['only_b_ids'], cases['only_b'])}"
        )
    for side in ("a", "b"):
        only = comparison[f"rubrics_only_in_{side}"]
        if only:
            lines.append(f"- rubrics only in {side.upper()}, not compared: {', '.join(only)}")
    if any(e["left_out"] for e in comparison["metrics"].values()):
        lines.append(
            "- left out: cases in both runs without a value on one side (parse_error, "
            "api_error, abstained), counted per metric above"
        )
    lines += [f"- note: {note}" for note in comparison["notes"]]
    return lines + _changes(comparison)


def _changes(comparison: dict[str, Any]) -> list[str]:
    """The cases that regressed, improved or could not be compared, per rubric."""
    lines: list[str] = []
    for key, head in CHANGE_HEADS.items():
        by_rubric = comparison.get(key) or {}
        if not by_rubric:
            continue
        lines += ["", head]
        for rubric_id, cases in by_rubric.items():
            named = ", ".join(_change(key, case) for case in cases[:MAX_CHANGES]) or "none"
            more = f", and {len(cases) - MAX_CHANGES} more" if len(cases) > MAX_CHANGES else ""
            lines.append(f"- {rubric_id} ({len(cases)}): {named}{more}")
    return lines


def _change(key: str, case: dict[str, Any]) -> str:
    if key == "not_comparable":
        return f"{case['id']} ({case['a']}, {case['b']})"
    return f"{case['id']} ({case['a']:.3f} -> {case['b']:.3f})"


def _num(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _ids(ids: list[str], count: int) -> str:
    if not count:
        return ""
    more = f", and {count - min(len(ids), MAX_IDS)} more" if count > MAX_IDS else ""
    return f" ({', '.join(ids[:MAX_IDS])}{more})"
