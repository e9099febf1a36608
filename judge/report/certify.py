"""The HTML report of `judge certify --html`: the verdict, the coverage-risk chart per rung
(a PNG drawn by `calibration.certify.render` with matplotlib's Agg canvas, inline as a
data: image, which the report's policy allows), the rungs' table, the cost and the
guarantee in words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration.certify.render import guarantee_text, idle_rungs
from judge.report.html import definitions, document, esc, section, table
from judge.report.write import write_html

__all__ = ["render_certify_report", "write_certify_report"]

_COLUMNS = (
    "rung", "judge", "confidence from", "threshold", "reached", "decided", "agreement",
    "lowest agreement (bound)", "cost per 1,000",
)  # fmt: skip


def _row(i: int, rung: dict[str, Any]) -> list[Any]:
    """One rung as the text table shows it: the threshold to four places, the cost in
    dollars to four (the generic three places would round $0.2809 to 0.281)."""
    upper = rung["disagreement_upper"]
    threshold = rung["threshold"]
    return [
        i, rung["judge"].get("model"), rung["confidence_source"],
        "none" if threshold is None else f"{threshold:.4f}", rung["reached"],
        rung["decided"], rung["agreement"], None if upper is None else 1 - upper,
        _usd(rung["cost_per_1000"]),
    ]  # fmt: skip


def render_certify_report(cert: dict[str, Any], chart_png_base64: str) -> str:
    """The report as an HTML string (`cert` as `judge certify --json` writes it)."""
    status = cert["status"]
    cls = "good" if status["verdict"] == "certified" else "bad"
    verdict = (
        f'<p><span class="tag {cls}">{esc(status["verdict"])}</span>{esc(status["reason"])}</p>'
    ) + "".join(f'<p><span class="tag">note</span>{esc(line)}</p>' for line in idle_rungs(cert))
    image = (
        f'<figure><img alt="coverage-risk curve per rung" '
        f'src="data:image/png;base64,{chart_png_base64}"><figcaption>each rung, on the '
        "labelled cases reaching it: agreement with people on the cases decided (line) and "
        "its lower bound at the rung's level (dashed) against the share decided; red: the "
        "target; dot: the threshold chosen. The test starts where its chains start (counts "
        "fixed before the labels are read), so a bound above the target before that "
        "certifies nothing</figcaption></figure>"
    )
    lo, hi = cert["coverage_ci95"]
    cost = cert.get("cost") or {}
    release = cert.get("release_pass_rate") or {}
    about = definitions(
        [
            ("agreement, delta", f"{cert['agreement']}, {cert['delta']}"),
            ("labelled cases", cert["n"]),
            ("coverage", f"{cert['coverage']:.3f} [{lo:.3f}, {hi:.3f}]"),
            (
                "cost per 1,000 (cascade / last rung)",
                f"{_usd(cost.get('cascade_per_1000'))} / {_usd(cost.get('last_rung_per_1000'))}",
            ),  # fmt: skip
            ("release pass rate", _release(release)),
            ("guarantee", guarantee_text(cert)),
            ("method", cert["method"]),
        ]
    )
    rows = [_row(i, r) for i, r in enumerate(cert["rungs"], start=1)]
    sections = [
        section("Verdict", verdict, about),
        section("Coverage and agreement per rung", image),
        section("Rungs", table(list(_COLUMNS), rows)),
    ]
    subtitle = "records: " + ", ".join(r["records"] for r in cert["rungs"])
    return document("Judge certify: decide where sure, escalate where not", subtitle, sections)


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _release(release: dict[str, Any]) -> str:
    shown = _rate(release.get("estimate"), release.get("ci95"))
    note = release.get("ci95_note")
    return f"{shown} (interval {note})" if note else shown


def _rate(estimate: float | None, ci95: list[float] | None) -> str:
    """A rate with its interval, to three places ("-" where there is none)."""
    if estimate is None:
        return "-"
    shown = f"{estimate:.3f}"
    return shown if not ci95 else f"{shown} [{ci95[0]:.3f}, {ci95[1]:.3f}]"


def write_certify_report(path: Path, cert: dict[str, Any], chart_png_base64: str) -> Path:
    return write_html(path, render_certify_report(cert, chart_png_base64))
