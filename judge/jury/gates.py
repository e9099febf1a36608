"""`judge grade --jury ... --fail-if` on the panel's figures: their names and values.

Beside the grade metrics of any run (`mean_score`, `error_rate`, ...) a jury's gates read:

- `panel.alpha`, `panel.alpha.ci95_low`, `panel.alpha.ci95_high`: Krippendorff's alpha
  among the jurors and its interval; `panel.n_eff` (Kish's effective votes: with human
  labels the errors' figure, `panel.n_eff_errors`, else the verdicts' figure,
  `panel.n_eff_verdicts`, which reads jurors that are all right as redundant),
  `panel.unanimous_share`, `panel.agreement_cases` (the cases those are measured on: the
  overlap in `mode: cyclic`);
- `panel.cost_usd`, `panel.cost_per_case_usd`, `panel.requests`,
  `panel.requests_per_case`: what this run's jurors spent, all together;
- `juror.NAME.cost_usd`, `juror.NAME.requests` for each juror;
- with `--human-labels` (and in `judge calibrate` over a panel's records):
  `panel.kappa`, `panel.kappa.ci95_low`, `panel.ac1`, `juror.NAME.kappa`, `juror.NAME.ac1`,
  `panel.vs_best.kappa_difference`, `panel.vs_best.ci95_low`, `panel.vs_best.p_value`
  (McNemar's), `panel.beats_best` (1 when the verdict is `better`, else 0),
  `panel.cost_ratio` and `panel.errors.mean_correlation`, `panel.errors.n_eff` (the same
  as `panel.n_eff_errors`) and `panel.errors.n_eff.ci95_low`.

The expressions are parsed and evaluated by `calibration.decisions.gates` (through
`judge.engine.measure.run_gates`), as every other `--fail-if`: a failed gate exits 3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

AGREEMENT = (
    "panel.alpha",
    "panel.alpha.ci95_low",
    "panel.alpha.ci95_high",
    "panel.n_eff",
    "panel.n_eff_verdicts",
    "panel.unanimous_share",
    "panel.agreement_cases",
)
COSTS = ("panel.cost_usd", "panel.cost_per_case_usd", "panel.requests", "panel.requests_per_case")
HUMANS = (
    "panel.kappa",
    "panel.kappa.ci95_low",
    "panel.ac1",
    "panel.vs_best.kappa_difference",
    "panel.vs_best.ci95_low",
    "panel.vs_best.p_value",
    "panel.beats_best",
    "panel.cost_ratio",
    "panel.errors.mean_correlation",
    "panel.errors.n_eff",
    "panel.errors.n_eff.ci95_low",
    "panel.n_eff_errors",
)

JUROR_HUMANS = ("kappa", "ac1")  # juror.NAME.kappa, juror.NAME.ac1


def jury_metric_names(jurors: Sequence[str], *, human_labels: bool) -> set[str]:
    """The names a jury's `--fail-if` may use (module doc)."""
    names = {*AGREEMENT, *COSTS}
    names |= {f"juror.{n}.{what}" for n in jurors for what in ("cost_usd", "requests")}
    if human_labels:
        names |= {*HUMANS, *(f"juror.{n}.{m}" for n in jurors for m in JUROR_HUMANS)}
    return names


def jury_metrics(jury: Mapping[str, Any]) -> dict[str, Any]:
    """The values of those names from a panel summary's `jury` block (None: undefined)."""
    agreement = jury["agreement"]
    alpha_ci = agreement.get("krippendorff_alpha_ci95") or (None, None)
    cost = jury["cost"]
    values: dict[str, Any] = {
        "panel.alpha": agreement.get("krippendorff_alpha"),
        "panel.alpha.ci95_low": alpha_ci[0],
        "panel.alpha.ci95_high": alpha_ci[1],
        "panel.n_eff": agreement.get("n_eff"),
        "panel.n_eff_verdicts": agreement.get("n_eff_verdicts", agreement.get("n_eff")),
        "panel.unanimous_share": agreement.get("unanimous_share"),
        "panel.agreement_cases": agreement.get("cases"),
        "panel.cost_usd": cost["total_usd"],
        "panel.cost_per_case_usd": cost["per_case_usd"],
        "panel.requests": cost["requests"],
        "panel.requests_per_case": cost["requests_per_case"],
    }
    for name, juror in cost["jurors"].items():
        values[f"juror.{name}.cost_usd"] = juror["cost_usd"]
        values[f"juror.{name}.requests"] = juror["requests"]
    humans = jury.get("vs_humans")
    if humans and "members" in humans:
        values |= vs_humans_metrics(humans)
        values["panel.n_eff"] = values["panel.n_eff_errors"]  # errors: what a vote depends on
    return values


def vs_humans_metrics(humans: Mapping[str, Any]) -> dict[str, Any]:
    """The `--human-labels` figures' names and values from a `vs_humans` block (calibration.
    compare.jury.jury_vs_humans), as `judge grade --jury` and `judge calibrate` gate them."""
    members, versus = humans["members"], humans["panel_vs_best"]
    panel_ci = members["panel"].get("kappa_ci95") or (None, None)
    diff_ci = versus.get("kappa_difference_ci95") or (None, None)
    errors = humans["error_correlation"]
    values = {
        "panel.kappa": members["panel"]["kappa"],
        "panel.kappa.ci95_low": panel_ci[0],
        "panel.ac1": members["panel"]["ac1"],
        "panel.vs_best.kappa_difference": versus["kappa_difference"],
        "panel.vs_best.ci95_low": diff_ci[0],
        "panel.vs_best.p_value": versus["mcnemar"]["p_value"],
        "panel.beats_best": int(versus["verdict"] == "better"),
        "panel.cost_ratio": humans.get("cost_ratio"),
        "panel.errors.mean_correlation": errors["mean"],
        "panel.errors.n_eff": errors["n_eff"],
        "panel.errors.n_eff.ci95_low": (errors.get("n_eff_ci95") or (None, None))[0],
        "panel.n_eff_errors": errors["n_eff"],
    }
    for name, member in members.items():
        if name != "panel":
            values |= {f"juror.{name}.kappa": member["kappa"], f"juror.{name}.ac1": member["ac1"]}
    return values


def undefined_reasons(values: Mapping[str, Any]) -> dict[str, str]:
    """Why a jury figure is undefined (a gate on it then fails, saying so)."""
    return {
        name: "undefined for this run (too few cases, or one label only, or no price known)"
        for name, value in values.items()
        if value is None
    }
