"""``report.md``: the calibration result as tables and sentences a reviewer can read.

Every text that comes from the data (labels, ids, annotator names, slices, file and field
names, notes) is escaped for Markdown (`escape_markdown`, or `code_span` where it is shown
as code): a label such as ``<img src=x onerror=...>`` or ``a | b`` or ``[click](http://…)``
is shown as written, never rendered as HTML, a link or a table cell of its own.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["code_span", "escape_markdown", "render_markdown"]

SHOWN_DISAGREEMENTS = 25
# CommonMark lets a backslash escape any ASCII punctuation; these are the ones that start
# markup in running text or a GFM table cell (`#`, `+`, `-` only matter at a line start,
# and a value never starts a line: newlines become spaces).
_MARKUP = re.compile(r"([\\`*_\[\]<>|~&!])")


class _Safe(str):
    """Text this module wrote itself (a formatted number, an interval): not escaped."""


def escape_markdown(value: Any) -> str:
    """`value` as literal Markdown text: markup characters backslash-escaped, line breaks
    made spaces."""
    if isinstance(value, _Safe):
        return str(value)
    text = " ".join(str(value).splitlines())
    return _MARKUP.sub(r"\\\1", text)


def code_span(value: Any) -> str:
    """`value` as one inline code span: fenced by one more backtick than its longest run,
    so nothing inside can close it (the content of a code span is never markup)."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return _Safe("undefined")
    if isinstance(value, float):
        return _Safe(f"{value:.{digits}f}")
    if isinstance(value, int):
        return _Safe(str(value))
    return escape_markdown(value)


def _ci(ci: Any) -> str:
    if not ci or ci[0] is None:
        return _Safe("—")
    return _Safe(f"[{ci[0]:.3f}, {ci[1]:.3f}]")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A GFM table: the header as given (callers escape what comes from the data), every
    cell escaped unless this module formatted it (`_Safe`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_num(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _matched(r: dict[str, Any]) -> str:
    split = r.get("split")
    if not split:
        return str(r["n"])
    return f"{split['n_dev'] + split['n_test']} ({r['n']} in the test split)"


def _data(r: dict[str, Any]) -> list[str]:
    s, u = r.get("settings", {}), r["unmatched"]
    lines = [
        "## Data",
        "",
        f"- judge: {code_span(s.get('judge_file'))} (field {code_span(s.get('judge_field'))}); "
        f"human: {code_span(s.get('human_file'))} (field {code_span(s.get('human_field'))})",
        f"- matched cases: **{_matched(r)}**; judge-only ids: {u['judge_only']}; "
        f"human-only ids: {u['human_only']} (listed in calibration.json)",
    ]
    for side in ("judge", "human"):
        for reason, count in r["excluded"][side].items():
            lines.append(f"- excluded from the {side} file: {count} ({escape_markdown(reason)})")
    vocab = r.get("vocabulary")
    if vocab:
        lines.append(f"- labels {escape_markdown(vocab['normalisation'])}")
        for key, who in (("only_judge", "the judge"), ("only_human", "people")):
            if vocab[key]:
                used = ", ".join(escape_markdown(label) for label in vocab[key])
                lines.append(f"- labels only {who} used: {used}")
    return [*lines, ""]


def _agreement(r: dict[str, Any]) -> list[str]:
    rows = [
        ["observed agreement", r.get("observed_agreement"), "—"],
        ["expected (chance) agreement", r.get("expected_agreement"), "—"],
        ["Cohen's kappa", r.get("kappa"), _ci(r.get("kappa_ci95"))],
        ["Gwet's AC1", r.get("ac1"), _ci(r.get("ac1_ci95"))],
        ["Krippendorff's alpha (nominal)", r.get("krippendorff_alpha"), "—"],
    ]
    if r.get("weights"):
        rows.append(
            [
                f"{r['weights']} weighted kappa",
                r.get("weighted_kappa"),
                _ci(r.get("weighted_kappa_ci95")),
            ]
        )
    rows.append(["balanced accuracy", r.get("balanced_accuracy"), "—"])
    lines = ["## Agreement", "", *_table(["statistic", "value", "95% interval"], rows)]
    if r.get("kappa_undefined_reason"):
        lines += [f"_{escape_markdown(r['kappa_undefined_reason'])}_", ""]
    if r.get("prevalence_note"):
        lines += [f"**{escape_markdown(r['prevalence_note'])}**", ""]
    for key, name in (("kappa", "kappa"), ("ac1", "AC1"), ("weighted_kappa", "weighted kappa")):
        if r.get(f"{key}_ci95_reason"):  # a degenerate bootstrap replaced (small_sample)
            lines += [f"_{name} interval: {escape_markdown(r[f'{key}_ci95_reason'])}; reported instead: "
                      f"{escape_markdown(r[f'{key}_ci95_method'])}_", ""]  # fmt: skip
    clustered = r.get("grouped_intervals")
    if clustered:  # --group-field: the cases come in groups
        lines += [f"_Intervals: the cases come in {clustered['groups']} groups; each interval is "
                  f"widened to hold the cluster bootstrap's, which resamples whole groups "
                  f"({', '.join(clustered['widened'])})._", ""]  # fmt: skip
    return lines


def _confusion(r: dict[str, Any]) -> list[str]:
    cm = r.get("confusion_matrix")
    if not cm:
        return []
    header = ["human \\ judge", *map(escape_markdown, cm["labels"])]
    rows = [[str(label), *row] for label, row in zip(cm["labels"], cm["matrix"], strict=True)]
    lines = ["## Confusion matrix (rows human, columns judge)", "", *_table(header, rows)]
    per = r.get("per_class") or {}
    rows = [
        [k, v["precision"], v["f1"], v["tpr"], _ci(v["tpr_ci95"]), v["tnr"], _ci(v["tnr_ci95"])]
        + [v["support"]]
        for k, v in per.items()
    ]
    header = ["class", "precision", "F1", "TPR (recall)", "95% interval", "TNR", "95% interval"]
    return lines + _table([*header, "support"], rows)


def _binary(r: dict[str, Any]) -> list[str]:
    b = r.get("binary")
    if not b:
        return []
    judged = b["judged"]
    rows = [
        ["judge pass rate, labelled cases", b["judge_pass_rate"], _ci(b["judge_pass_rate_ci95"])],
        [
            f"judge pass rate, all {judged['n']} judged cases",
            judged["pass_rate"],
            _ci(judged["pass_rate_ci95"]),
        ],
        ["human pass rate, labelled cases", b["human_pass_rate"], _ci(b["human_pass_rate_ci95"])],
        [
            "corrected pass rate (Rogan-Gladen)",
            b["corrected_pass_rate"],
            _ci(b["corrected_pass_rate_ci95"]),
        ],
        ["true positive rate (sensitivity)", b["tpr"], _ci(b["tpr_ci95"])],
        ["true negative rate (specificity)", b["tnr"], _ci(b["tnr_ci95"])],
    ]
    if judged["unlabelled"]:
        note = (
            f"The corrected rate applies the judge's error rates, measured on the labelled "
            f"cases, to its verdicts on all {judged['n']} judged cases "
            f"({judged['unlabelled']} of them unlabelled)."
        )
    else:
        note = (
            "Every judged case is labelled, so the corrected rate is the human rate with its "
            "Wilson interval; it differs once the judge grades cases nobody labelled."
        )
    if b.get("left_out"):
        note += f" {b['left_out']} labelled cases marked abstained (by either side) are left out."
    if b.get("corrected_pass_rate_reason"):
        note += f" _{escape_markdown(b['corrected_pass_rate_reason'])}_"
    title = f"## Pass rates (pass = {code_span(b['positive_label'])})"
    if b.get("positive_from"):  # where the pass class came from (the rubric, the option)
        note = f"Pass class from {escape_markdown(b['positive_from'])}. {note}"
    return [title, "", *_table(["rate", "value", "95% interval"], rows), note, ""]


def _numeric(r: dict[str, Any]) -> list[str]:
    corr = r.get("correlation")
    if not corr:
        return []
    rows = [[k, v] for k, v in corr.items()] + [["MAE", r.get("mae")]]
    for key in ("exact_agreement", "adjacent_agreement"):
        if key in r:
            rows.append([key.replace("_", " "), r[key]])
    lines = ["## Scores", "", *_table(["statistic", "value"], rows)]
    if r.get("scale_mismatch"):
        lines += [f"_{escape_markdown(r['scale_mismatch'])}_", ""]
    g = r.get("correlation_by_group")
    if g:
        lines += [
            f"Mean per-group correlation over {g['groups_used']} groups "
            f"({g['groups_skipped']} constant groups skipped): pearson {_num(g['pearson'])}, "
            f"spearman {_num(g['spearman'])}, kendall {_num(g['kendall'])}.",
            "",
        ]
    return lines


def _inter_annotator(r: dict[str, Any]) -> list[str]:
    ia = r.get("inter_annotator")
    if not ia:
        return []
    rows = [[pair, v["n"], v["kappa"]] for pair, v in ia["pairwise"].items()]
    weighted = ""
    if ia.get("weighted_fleiss_kappa") is not None:
        weighted = f" ({ia['ceiling_weights']} weighted: {_num(ia['weighted_fleiss_kappa'])})"
    settled = "; ".join(f"{rule}: {n}" for rule, n in (ia.get("adjudicated") or {}).items())
    summary = (
        f"Fleiss' kappa {_num(ia['fleiss_kappa'])} {_ci(ia.get('fleiss_kappa_ci95'))}{weighted} "
        f"over the {ia.get('n_multiply_rated', ia['n_complete'])} items with two or more "
        f"ratings ({ia['n_complete']} rated by everyone); Krippendorff's alpha "
        f"({ia['alpha_level']}) {_num(ia['krippendorff_alpha'])} "
        f"{_ci(ia.get('krippendorff_alpha_ci95'))} (95% bootstrap intervals over items). "
        f"Ceiling, one annotator against another on the judge's weights: "
        f"{_num(ia['ceiling'])} {_ci(ia.get('ceiling_ci95'))}. The judge is compared with "
        f"one label per case ({ia.get('consolidation', 'consolidated')}); "
        f"ids settled by a rule: {settled or 'none'} (all kept)."
    )
    title = "## Inter-annotator agreement (the ceiling)"
    return [title, "", *_table(["annotators", "n", "Cohen's kappa"], rows), summary, ""]


def _gate(r: dict[str, Any]) -> list[str]:
    gate = r.get("gate")
    if not gate:
        return []
    lines = [f"## Gate: {'FAILED' if gate['failed'] else 'passed'}", ""]
    return [*lines, *(f"- {code_span(check)}" for check in gate["checks"]), ""]


def _split(r: dict[str, Any]) -> list[str]:
    split = r.get("split")
    if not split:
        return []
    dev, test = split["side_by_side"]["dev"], split["side_by_side"]["test"]
    rows = [
        [name, dev.get(name), test.get(name)]
        for name in split["shown"]
        if dev.get(name) is not None or test.get(name) is not None
    ]
    intro = (
        f"{split['n_test']} of {split['n_dev'] + split['n_test']} labelled cases held out "
        f"(test {split['test_fraction']:g}, seed {split['seed']}"
        f"{', stratified by human label' if split['stratified'] else ''}). Choices made "
        "from the data (a fitted threshold) use dev only; every other section of this "
        "report, and readiness, is the test split's."
    )
    return ["## Dev and test", "", intro, "", *_table(["figure", "dev", "test"], rows)]


def _threshold(r: dict[str, Any]) -> list[str]:
    t = r.get("threshold")
    if not t:
        return []
    fitted = ""
    if t["fitted"]:
        fitted = (
            " (fitted on the dev split only)"
            if t.get("fitted_on") == "dev split"
            else " (fitted on these labels: in-sample, optimistic)"
        )
    return ["## Threshold", "", f"{escape_markdown(t['rule'])}{fitted}", ""]


def _slices(r: dict[str, Any]) -> list[str]:
    slices = r.get("slices")
    if not slices:
        return []
    header = ["slice", "n", "kappa", "95% interval", "readiness"]
    rows = [
        [name, s["n"], s.get("kappa"), _ci(s.get("kappa_ci95")), s["readiness"]]
        for name, s in slices.items()
    ]
    return ["## Slices", "", *_table(header, rows)]


def _explained(r: dict[str, Any]) -> list[str]:
    section = r.get("errors_by_covariate")
    if not section:
        return []
    lines = ["## Why the judge errs", "", f"**{escape_markdown(section['summary'])}**", ""]
    rows = section.get("covariates")
    if rows:
        lines.append(
            f"{escape_markdown(section['model'])}; outcome: {escape_markdown(section['outcome'])} "
            f"({section['disagreements']} "
            f"of {section['n']} labelled cases). An odds ratio above 1 means more "
            "disagreement, other covariates held fixed; an association, not a cause. "
            "Significant: Holm-adjusted p below 0.05 over the table's tests."
            + (
                f" A slice's odds ratio is against {escape_markdown(section['reference'])}."
                if section.get("reference")
                else ""
            )
        )
        lines.append("")
        table = [
            [
                row["description"] + (f" (per {row['unit']})" if row["unit"] else ""),
                row["odds_ratio"],
                _ci(row["ci95"]),
                format_p(row["p_value"]),
                format_p(row["p_adjusted"]),
            ]
            for row in rows
        ]
        lines += _table(["covariate", "odds ratio", "95% interval", "p", "p (Holm)"], table)
    lines += [f"- {escape_markdown(note)}" for note in section.get("notes") or []]
    return [*lines, ""] if section.get("notes") else lines


def _disagreements(r: dict[str, Any]) -> list[str]:
    rows = r.get("disagreements") or []
    if not rows:
        return ["## Disagreements", "", "None.", ""]
    shown = rows[:SHOWN_DISAGREEMENTS]
    has_distance = "distance" in shown[0]
    header = ["id", "human", "judge", *(["distance"] if has_distance else [])]
    table = [
        [d["id"], d["human"], d["judge"], *([d["distance"]] if has_distance else [])] for d in shown
    ]
    intro = f"Worst first; {len(shown)} of {len(rows)} shown (all are in calibration.json)."
    return ["## Disagreements", "", intro, "", *_table(header, table)]


def render_markdown(result: dict[str, Any]) -> str:
    """The report as Markdown; ``result`` is the strict-JSON form (``None`` for undefined)."""
    lines = ["# Judge calibration report", "", f"**Readiness: {result['readiness']}**", ""]
    lines += [f"- {escape_markdown(reason)}" for reason in result["readiness_reasons"]] + [""]
    for section in (
        _gate,
        _data,
        _split,
        _agreement,
        _confusion,
        _binary,
        _numeric,
        _inter_annotator,
        _threshold,
        _slices,
        _explained,
        _disagreements,
    ):
        lines += section(result)
    return "\n".join(lines).rstrip() + "\n"


def format_p(value: Any, *, missing: str = "—") -> str:
    """A p-value for a reader: `< 0.001` below that (never `0.000`), else 3 decimals
    (text this module wrote: not escaped)."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        return _Safe(missing)
    return _Safe("< 0.001" if value < 0.001 else f"{value:.3f}")
