"""`--human-labels FILE` on `judge grade`: the option and the table of
prediction-powered estimates printed under the summary (reading the file: judge.app.labels)."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from judge.app.labels import small_sample

QUANTITIES = ("pass_rate", "mean_score", "mean_label")
WIDTH = 124  # the widest row: slice, figure, labelled and four "0.66 [0.48,0.83]" cells


def add_human_labels_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--human-labels",
        type=Path,
        metavar="FILE",
        help="human labels of some of the cases (CSV or JSONL with id and label; score and "
        "annotator if any), e.g. from `judge label export`: the summary adds, for the pass "
        "rate and the mean scores, the judge-only, human-only and PPI++ estimates with 95%% "
        "intervals and the corrected pass rate, overall and per slice (gate on them with "
        "--fail-if 'ppi.pass_rate.ci95_low < 0.8'); an inclusion_probability column "
        "reweights a stratified labelling sample",
    )
    parser.add_argument(
        "--positive-label",
        metavar="L",
        help="with --human-labels: the label counted as a pass (default: the rubric's pass "
        "label, the one it scores 1.0: faithful, match, pass...; said under the table)",
    )


def print_estimates(summary: dict[str, Any]) -> None:
    """The `ppi` block of a summary as a compact table on stdout: one row per figure and
    slice, each cell an estimate and its 95% interval."""
    from rich.console import Console

    console = Console(file=sys.stdout, width=max(WIDTH, shutil.get_terminal_size().columns))
    ppi = summary.get("ppi")
    if not ppi:
        return
    if ppi.get("reason"):
        console.print(f"human labels ({_name(ppi)}): no estimates: {ppi['reason']}")
        return
    table, rough = _estimates_table(summary, ppi)
    console.print(table)
    if ppi.get("positive_label") is not None:
        source = ppi.get("positive_from") or "the rubric"
        console.print(f"pass = {ppi['positive_label']!r} ({source})", highlight=False)
    ignored = ppi["counts"].get("human_only")
    if ignored:  # a trimmed input with the fuller label file, or --limit / --sample
        console.print(
            f"human labels ({_name(ppi)}): {ignored} label(s) of cases not graded in this run "
            "ignored (not in the input, or outside --limit/--sample)"
        )
    if rough:
        console.print(
            f"* under {small_sample()} labels: every interval is rough, and PPI++'s is widened "
            "to the labelled cases' own score interval; label more (judge calibrate --plan)"
        )


def _estimates_table(summary: dict[str, Any], ppi: dict[str, Any]) -> tuple[Any, bool]:
    """The table of estimates, and whether any row rests on too few labels (marked *)."""
    from rich import box
    from rich.table import Table

    counts = ppi["counts"]
    weighted = "; reweighted by inclusion probability" if ppi.get("weighted") else ""
    table = Table(
        title=f"human labels ({_name(ppi)}): {counts['labelled']} of {counts['judged']} "
        f"graded cases labelled; PPI++ with 95% intervals{weighted}",
        title_justify="left",
        box=box.SIMPLE,
    )
    for heading in ("slice", "figure", "labelled", "judge only", "human only", "PPI++"):
        left = heading in ("slice", "figure")
        table.add_column(heading, justify="left" if left else "right", no_wrap=True)
    table.add_column("corrected", justify="right", no_wrap=True)
    rows = [("all", ppi)] + [
        (name, stats["ppi"])
        for name, stats in summary.get("by_slice", {}).items()
        if "ppi" in stats
    ]
    rough = False
    for name, block in rows:
        for quantity in QUANTITIES:
            q = block.get(quantity)
            if q is not None:
                rough = rough or bool(q.get("note"))
                table.add_row(name, quantity.replace("_", " "), *_cells(q))
    return table, rough


def _cells(q: dict[str, Any]) -> list[str]:
    mark = "*" if q.get("note") else ""
    return [
        f"{mark}{q['n_labelled']}/{q['n_labelled'] + q['n_unlabelled']}",
        _interval(q.get("judge_only")),
        _interval(q.get("human_only")),
        _interval(q),
        _interval(q.get("corrected")) if "corrected" in q else "",
    ]


def _name(ppi: dict[str, Any]) -> str:
    return Path(str(ppi.get("labels", ""))).name


def _interval(block: dict[str, Any] | None) -> str:
    if not block or block.get("estimate") is None:
        return "-"
    low, high = block.get("ci95_low"), block.get("ci95_high")
    bounds = f" [{low:.2f},{high:.2f}]" if low is not None and high is not None else ""
    return f"{block['estimate']:.2f}{bounds}"
