"""A certificate as text (Markdown) and its coverage-risk chart: per rung, agreement with
people on the cases decided against the share decided, the bound, and the threshold
chosen (PNG, matplotlib's Agg canvas, which needs no display)."""

from __future__ import annotations

import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["certificate_markdown", "coverage_risk_png", "guarantee_text", "idle_rungs"]


def _num(value: Any, form: str = ".3f") -> str:
    return "-" if value is None else format(value, form)


def _cost(value: Any) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def guarantee_text(cert: dict[str, Any]) -> str:
    """The guarantee in words, with what it assumes."""
    if not cert["certified"]:
        return "nothing is certified: every case goes to people"
    return (
        f"with probability at least {1 - cert['delta']:.0%} over the draw of the labelled "
        f"cases, the cases the cascade decides agree with people on at least "
        f"{cert['agreement']:.0%} of them; the rest go to people. Assumes {cert['assumes']}"
    )


def idle_rungs(cert: dict[str, Any]) -> list[str]:
    """A line for each rung before the last that decides nothing yet is paid on every
    case reaching it: the cascade would do as well without it, for less."""
    out = []
    rungs = cert["rungs"]
    for i, r in enumerate(rungs[:-1], start=1):
        cost = r.get("cost_per_1000")
        if r["threshold"] is None and r["reached"]:
            paid = "" if cost is None else f", yet costs {_cost(cost)} per 1,000 cases reaching it"
            out.append(
                f"rung {i} ({r['judge'].get('model')}) decides nothing at agreement "
                f"{cert['agreement']}{paid}: certify the cascade without it"
            )
    return out


def certificate_markdown(cert: dict[str, Any]) -> str:
    """The certificate as the command prints it."""
    lines = [
        f"# judge certify: agreement {cert['agreement']} at delta {cert['delta']}",
        "",
        f"{cert['n']} labelled cases; rubric: {_rubric(cert['rubric'])}",
        "",
        "| rung | judge | threshold | reached | decided | share decided | agreement | "
        "bound (lowest agreement) | cost per 1,000 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, r in enumerate(cert["rungs"], start=1):
        share = r["decided"] / cert["n"] if cert["n"] else 0
        bound = None if r["disagreement_upper"] is None else 1 - r["disagreement_upper"]
        threshold = "none" if r["threshold"] is None else _num(r["threshold"], ".4f")
        lines.append(
            f"| {i} | {r['judge'].get('model')} | {threshold} | {r['reached']} | {r['decided']} "
            f"| {share:.1%} | {_num(r['agreement'])} | {_num(bound)} | {_cost(r['cost_per_1000'])} |"
        )
    lo, hi = cert["coverage_ci95"]
    lines += [
        "",
        f"coverage: {cert['coverage']:.1%} decided over all rungs, 95% interval "
        f"[{lo:.1%}, {hi:.1%}]; the rest ({1 - cert['coverage']:.1%}) go to people",
    ]
    lines += _cost_lines(cert)
    lines += [f"note: {line}" for line in idle_rungs(cert)]
    lines += _release_lines(cert.get("release_pass_rate"))
    lines += ["", f"guarantee: {guarantee_text(cert)}", "", f"method: {cert['method']}"]
    if cert.get("kept"):
        test = "pooled test" if cert["kept"] == "pooled" else "per-rung tests"
        lines.append(f"kept: the {test}, which decided more labelled cases")
    return "\n".join(lines) + "\n"


def _rubric(rubric: dict[str, Any] | None) -> str:
    if rubric is None:
        return "unknown (not graded records)"
    return f"{rubric['id']}@{rubric['version']}"


def _cost_lines(cert: dict[str, Any]) -> list[str]:
    cost = cert.get("cost")
    if not cost:
        return []
    return [
        "",
        f"cost per 1,000 cases: cascade {_cost(cost['cascade_per_1000'])} (each rung's cost "
        f"on the cases that reach it), all to the last rung {_cost(cost['last_rung_per_1000'])}",
    ]


def _release_lines(release: dict[str, Any] | None) -> list[str]:
    if release is None:
        return []
    if release["estimate"] is None:
        return ["", f"release pass rate: not estimated ({release['reason']})"]
    lo, hi = release["ci95"]
    esc = release["escalated"]
    escalated = (
        "every escalated case labelled"
        if esc["exact"]
        else f"{esc['labelled']} of the {esc['total']} escalated cases labelled, as a sample"
    )
    note = f"; interval {release['ci95_note']}" if release.get("ci95_note") else ""
    return [
        "",
        f"release pass rate ({release['pass_label']}): {release['estimate']:.1%} "
        f"[{lo:.1%}, {hi:.1%}] ({release['method']}; {escalated}{note}; in-sample: the "
        "thresholds came from the same labels)",
    ]


def coverage_risk_png(cert: dict[str, Any], curves: list[dict[str, Any]]) -> bytes:
    """One panel per rung: agreement on decided cases (line) and its certified lower
    bound (dashed) against the share of the rung's cases decided; the target A; the
    chosen threshold (dot)."""
    fig = Figure(figsize=(5.2 * max(1, len(curves)), 3.6))
    FigureCanvasAgg(fig)
    for i, (curve, rung) in enumerate(zip(curves, cert["rungs"], strict=False)):
        ax = fig.add_subplot(1, max(1, len(curves)), i + 1)
        ax.plot(curve["share"], curve["agreement"], color="#1f5fa8", label="agreement")
        ax.plot(curve["share"], curve["bound"], color="#1f5fa8", ls="--", label="bound")
        ax.axhline(cert["agreement"], color="#a33", lw=1, label=f"target {cert['agreement']}")
        if rung["threshold"] is not None and rung["reached"]:
            ax.plot([rung["decided"] / max(1, curve["usable"])], [rung["agreement"]], "o",
                    color="#1a7f37", label=f"threshold {rung['threshold']:.4f}")  # fmt: skip
        ax.set_title(f"rung {i + 1}: {rung['judge'].get('model')}", fontsize=9)
        ax.set_xlabel("share of the rung's cases decided")
        ax.set_ylabel("agreement with people")
        ax.set_xlim(0, 1)
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110)
    return out.getvalue()
