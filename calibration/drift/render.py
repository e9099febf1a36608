"""A drift report as a Markdown table, and its chart: each window's agreement with its
interval, the reference's band, and the windows that alarmed (PNG, matplotlib's Agg
canvas, which needs no display)."""

from __future__ import annotations

import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["PAST_CAVEAT", "drift_chart_png", "drift_markdown", "plain_reading", "reference_text"]

NAMES = {"kappa": "kappa", "weighted_kappa": "weighted kappa"}
# Said beside the verdict of `--reference past`: what that reference cannot see.
PAST_CAVEAT = (
    "against the past, a drop that lasts becomes the reference: the windows after it no "
    "longer alarm, and a slow slide may never; compare with --reference first or a "
    "release calibration to see a lasting drop"
)


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(value: Any) -> str:
    return "-" if not value else f"[{value[0]:.2f}, {value[1]:.2f}]"


def _rate(row: dict[str, Any], side: str) -> str:
    rate = row.get(f"{side}_pass_rate")
    return "-" if rate is None else f"{rate:.0%} {_ci(row.get(f'{side}_pass_rate_ci95'))}"


def _change(row: dict[str, Any]) -> str:
    if row["difference"] is None:
        return "-"
    return f"{row['difference']:+.3f} {_ci(row['difference_ci95'])}"


def _verdict(row: dict[str, Any], reference: dict[str, Any]) -> str:
    if reference.get("kind") != "file" and row["window"] == reference.get("name"):
        return "reference"
    if not row["enough"]:
        return f"too few labels: {row['needs']}"
    return "**ALARM**" if row["alarm"] else "ok"


def annotate(report: dict[str, Any], positive_source: str | None) -> None:
    """What the command and the viewer add to a report (or a slice of one) in place:
    where its pass class came from, the verdict in one plain sentence, and the caveat of a
    past reference."""
    report["positive_from"] = positive_source if report.get("positive_label") else None
    report["status"]["reading"] = plain_reading(report)
    if report["reference"].get("kind") == "past":
        report["status"]["caveat"] = PAST_CAVEAT


def plain_reading(report: dict[str, Any]) -> str:
    """The verdict in one plain sentence, before the method: where agreement fell and by
    how much, or that it held, or that the labels are too few to say."""
    name = NAMES[report["coefficient"]]
    alarm, status = report["alarm"], report["status"]
    if alarm.get("fired"):
        row = next(r for r in report["windows"] if r["window"] == alarm["first_window"])
        against = row.get("past") or report["reference"]
        return (
            f"the judge agrees with people less from window {row['window']} on: {name} "
            f"{_num(row['agreement'])} there against {_num(against.get('agreement'))} in the "
            "reference, a fall larger than chance explains"
        )
    if status["verdict"] == "stable":
        return (
            f"the judge agrees with people as it did in the reference: no window's {name} "
            "fell by more than chance explains"
        )
    return "too few labels to tell whether the judge still agrees with people"


def reference_text(ref: dict[str, Any], name: str) -> str:
    """What each window is compared with, in words."""
    if ref.get("kind") == "past":
        return f"past: each window against all the windows before it, pooled (from {ref['name']})"
    return (
        f"{ref.get('kind')} {ref.get('name')} (n {ref.get('n', '-')}, "
        f"{name} {_num(ref.get('agreement'))} {_ci(ref.get('agreement_ci95'))})"
    )


def drift_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: what was compared, one row a window, the alarm's verdict."""
    name = NAMES[report["coefficient"]]
    if report["weights"]:
        name += f" ({report['weights']})"
    ref = report["reference"]
    alarm = report["alarm"]
    lines = [
        f"# Judge drift: {name} with people, window by window",
        "",
        f"- windows: {report['windowing']}; time: {report.get('time_source') or 'file order'}",
        *_pass_line(report),
        f"- reference: {reference_text(ref, name)}",
        f"- in short: {report['status'].get('reading') or plain_reading(report)}",
        f"- alarm: {alarm['method']}; alpha {alarm['alpha']}, threshold {_num(alarm['threshold'])}",
        *_detectable_line(alarm.get("detectable")),
        *_pairs_lines(report),
        "",
        f"| window | n | {name} [95%] | AC1 [95%] | judge pass | human pass "
        "| change vs reference [95%] | scan | verdict |",
        "|---|---:|---|---|---|---|---|---:|---|",
    ]
    for row in report["windows"]:
        lines.append(
            f"| {row['window']} | {row['n']} | {_num(row['agreement'])} "
            f"{_ci(row['agreement_ci95'])} | {_num(row.get('ac1'))} {_ci(row.get('ac1_ci95'))} "
            f"| {_rate(row, 'judge')} | {_rate(row, 'human')} | {_change(row)} "
            f"| {_num(row['scan'])} | {_verdict(row, ref)} |"
        )
    notes = [
        f"- window {r['window']}: {r['prevalence_note']}"
        for r in report["windows"]
        if r.get("prevalence_note")
    ]
    if notes:
        lines += ["", "Where one label dominates, read AC1 beside kappa:", *notes]
    status = report["status"]
    caveat = f" ({status['caveat']})" if status.get("caveat") else ""
    lines += ["", f"**{status['verdict']}**: {status['reason']}{caveat}"]
    return "\n".join(lines) + "\n"


def _detectable_line(found: dict[str, Any] | None) -> list[str]:
    """What the alarm can see at this stream's window size and rates, in one line."""
    if not found:
        return []
    window = int(found["window"])
    if found["disagreement"] is None:
        return [f"- detectable: no drop within two windows of {window} (windows too small)"]
    rates = (f"disagreement {found['reference_disagreement']:.1%} to "
             f"{found['disagreement']:.1%}")  # fmt: skip
    if found["kappa"] is None:
        return [f"- detectable within two windows of {window} (80% of the time): {rates}"]
    return [
        f"- detectable within two windows of {window} (80% of the time): a fall in kappa "
        f"from {found['reference_kappa']:.2f} to {found['kappa']:.2f} ({rates}); "
        "smaller drops may go unseen"
    ]


def _pairs_lines(report: dict[str, Any]) -> list[str]:
    """The null's assumption on the pairs, and the repeats dropped before windowing."""
    lines = []
    if report.get("pairs"):
        lines.append(f"- pairs: {report['pairs']}")
    repeats = report.get("repeats_dropped") or {}
    if repeats.get("ids") or repeats.get("inputs"):
        lines.append(f"- repeats dropped: {repeats.get('ids', 0)} repeated ids, "
                     f"{repeats.get('inputs', 0)} repeated inputs (inputs_sha256)")  # fmt: skip
    return lines


def _pass_line(report: dict[str, Any]) -> list[str]:
    """Which label the pass columns count, and where that came from (two classes only)."""
    label = report.get("positive_label")
    if label is None:
        return []
    source = report.get("positive_from") or "the rule for two classes"
    return [f"- pass: {label!r} ({source})"]


def drift_chart_png(report: dict[str, Any]) -> bytes:
    """Each window's agreement (point) and interval (bar), the reference's interval as a
    band and its value as a line, alarmed windows in red; windows too small are left out."""
    rows = [r for r in report["windows"] if r["agreement"] is not None]
    figure = Figure(figsize=(max(6.0, 0.45 * len(rows) + 3), 3.6), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    ref = report["reference"]
    if ref.get("agreement") is not None:
        ax.axhline(ref["agreement"], color="#2b6cb0", lw=1, label="reference")
        if ref.get("agreement_ci95"):
            low, high = ref["agreement_ci95"]
            ax.axhspan(low, high, color="#2b6cb0", alpha=0.12, label="reference 95%")
    past = [(x, row["past"]["agreement"]) for x, row in enumerate(rows) if row.get("past")]
    for x, value in past:  # --reference past: what each window is compared with
        label = "the windows before, pooled" if x == past[0][0] else "_past"  # "_": no legend
        ax.hlines(value, x - 0.35, x + 0.35, color="#2b6cb0", lw=1.5, ls="--", label=label)
    for x, row in enumerate(rows):
        colour = "#c53030" if row["alarm"] else ("#1a202c" if row["enough"] else "#a0aec0")
        ci = row["agreement_ci95"]
        if ci:
            ax.vlines(x, ci[0], ci[1], color=colour, lw=2)
        ax.plot(x, row["agreement"], "o", color=colour)
    ax.set_xticks(range(len(rows)), [r["window"] for r in rows], rotation=45, ha="right")
    ax.set_ylabel(NAMES[report["coefficient"]])
    ax.set_title("agreement by window (red: alarm; grey: too few labels)", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower left", fontsize=8)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
