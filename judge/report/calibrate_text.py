"""The few lines `judge calibrate` prints: what was compared, what was left out, the
headline figures, a jury's figures side by side, and the verdict. Pure text formatting of
the calibrate job's result; everything else is in ``report.md``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["jury_lines", "summary_lines"]


def _fmt(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return "undefined" if value is None or value != value else f"{value:.3f}"


def _interval(ci: Any) -> str:
    return f" (95% CI {ci[0]:.3f} to {ci[1]:.3f})" if ci and ci[0] == ci[0] else ""


def _data_lines(result: dict[str, Any]) -> list[str]:
    unmatched = result["unmatched"]
    split = result.get("split")
    matched = f"{result['n']} matched"
    if split:
        matched = f"{split['n_dev'] + split['n_test']} matched ({result['n']} in the test split)"
    lines = [
        f"n = {matched}; unmatched ids: {unmatched['judge_only']} judge-only, "
        f"{unmatched['human_only']} human-only"
    ]
    for side in ("judge", "human"):
        for reason, count in result["excluded"][side].items():
            lines.append(f"excluded from the {side} file: {count} ({reason})")
    vocab = result.get("vocabulary")
    if vocab:
        lines.append(f"labels: {vocab['normalisation']}")
        if vocab["only_judge"]:
            lines.append(f"  only the judge used: {vocab['only_judge']}")
        if vocab["only_human"]:
            lines.append(f"  only people used: {vocab['only_human']}")
    return lines


def _figure_lines(result: dict[str, Any]) -> list[str]:
    lines = []
    if result.get("kappa_undefined_reason") is None or result.get("labels"):
        lines.append(f"kappa = {_fmt(result.get('kappa'))}{_interval(result.get('kappa_ci95'))}")
    if result.get("ac1") is not None:
        lines.append(f"Gwet's AC1 = {_fmt(result['ac1'])}{_interval(result.get('ac1_ci95'))}")
    if result.get("prevalence_note"):
        lines.append(f"note: {result['prevalence_note']}")
    if result.get("weighted_kappa") is not None:
        lines.append(
            f"{result['weights']} weighted kappa = {_fmt(result['weighted_kappa'])}"
            f"{_interval(result.get('weighted_kappa_ci95'))}"
        )
    for key, name in (("kappa", "kappa"), ("ac1", "AC1"), ("weighted_kappa", "weighted kappa")):
        if result.get(f"{key}_ci95_reason"):
            lines.append(
                f"note: {name} interval: {result[f'{key}_ci95_reason']}; reported instead: "
                f"{result[f'{key}_ci95_method']}"
            )
    corr = result.get("correlation")
    if corr:
        lines.append(
            "pearson = {} spearman = {} kendall = {}".format(
                *(_fmt(corr[k]) for k in ("pearson", "spearman", "kendall"))
            )
        )
        lines.append(f"MAE = {_fmt(result['mae'])}" if result.get("mae") is not None else "")
    if result.get("scale_mismatch"):
        lines.append(f"note: {result['scale_mismatch']}")
    clustered = result.get("grouped_intervals")
    if clustered:
        lines.append(
            f"intervals: cases in {clustered['groups']} groups; kappa, AC1 and the rates "
            "widened to hold the cluster bootstrap (whole groups resampled)"
        )
    grouped = result.get("correlation_by_group")
    if grouped:
        lines.append(
            f"per-group correlation over {grouped['groups_used']} groups "
            f"({grouped['groups_skipped']} skipped as constant): "
            f"kendall {_fmt(grouped['kendall'])}, pearson {_fmt(grouped['pearson'])}"
        )
    return [line for line in lines if line]


def _split_lines(result: dict[str, Any]) -> list[str]:
    split = result.get("split")
    if not split:
        return []
    dev, test = split["side_by_side"]["dev"], split["side_by_side"]["test"]
    lines = [
        f"held-out split: dev {split['n_dev']}, test {split['n_test']} labelled cases "
        f"(seed {split['seed']}); the figures below are the test split's",
        f"{'':20} {'dev':>9} {'test':>9}",
    ]
    for name in split["shown"]:
        if dev.get(name) is not None or test.get(name) is not None:
            lines.append(f"{name:20} {_fmt(dev.get(name)):>9} {_fmt(test.get(name)):>9}")
    return lines


def summary_lines(result: dict[str, Any], paths: list[Path]) -> list[str]:
    """The lines `judge calibrate` prints of a calibration result."""
    lines = [*_data_lines(result), *_split_lines(result), *_figure_lines(result)]
    lines += jury_lines(result)
    explained = result.get("errors_by_covariate")
    if explained:
        lines.append(f"why the judge errs: {explained['summary']}")
    lines += _pass_lines(result.get("binary"))
    lines.append(f"readiness: {result['readiness']}")
    lines += [f"  - {reason}" for reason in result["readiness_reasons"]]
    gate = result.get("gate")
    if gate:
        lines.append(f"gate: {'FAILED (exit 3)' if gate['failed'] else 'passed'}")
        lines += [f"  - {check}" for check in gate["checks"]]
    lines.append("wrote: " + ", ".join(str(p) for p in paths))
    return lines


def _pass_lines(binary: Mapping[str, Any] | None) -> list[str]:
    """Which label the pass rates count, where that came from, and the two pass rates."""
    if not binary:
        return []
    source = binary.get("positive_from") or "calibration's rule for two classes"
    return [
        f"pass = {binary['positive_label']!r} ({source})",
        f"judge pass rate = {_fmt(binary.get('judge_pass_rate'))}, "
        f"human pass rate = {_fmt(binary.get('human_pass_rate'))} (labelled cases)",
    ]


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
