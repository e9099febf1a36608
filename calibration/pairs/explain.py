"""Why the judge errs: which case features go with disagreement, from the labels in hand.

A logistic regression of disagreement (the judge's label differs from people's) on the
covariates of :mod:`calibration.pairs.covariates` (answer length, number of contexts, slices,
the order a pair was shown in), all at once, so each odds ratio is net of the others.
Robust (sandwich) standard errors; 95% Wald intervals on the odds-ratio scale. An odds
ratio of 1.8 per 100 words says that each 100 more words multiply the odds that the judge
disagrees with people by 1.8, other covariates held fixed. It is an association on the
labelled cases, not a cause, and it needs enough disagreements to say anything: the
section says plainly when it cannot.

A covariate is called significant only after **Holm's** step-down correction over the
Wald tests of the model (one per covariate, up to a dozen): uncorrected, a judge whose
errors have no association with anything would get a "significant" cause in one run of
five. Each row keeps its raw ``p_value`` beside ``p_adjusted``; the 95% intervals are the
unadjusted Wald intervals. A slice's odds ratio compares its cases with the
``reference`` cases: those in none of the modelled slices, named in the row (``slice
'routine'`` when the slices split the cases and that one was left out as a combination
of the others).

References: Holm (1979), Scand. J. Stat. 6(2); statsmodels' ``multipletests(method=
"holm")``, which the tests check against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.errors import CalibrationInputError
from calibration.inference.intervals import holm_adjust
from calibration.inference.logistic import CovType, LogitFit, fit_logit, independent_columns
from calibration.pairs.covariates import Design, build_design

__all__ = ["errors_by_covariate", "strongest_sentence"]

MIN_CASES = 10
MIN_EACH = 2  # agreements and disagreements each
EVENTS_PER_COVARIATE = 10
ALPHA = 0.05  # family-wise, over the model's covariates (Holm)


def _drop_collinear(design: Design) -> None:
    kept = independent_columns(design.x)
    dropped = [design.covariates[j - 1] for j in range(1, design.x.shape[1]) if j not in kept]
    for covariate in dropped:
        design.notes.append(
            f"{covariate.description} is a combination of the other covariates: left out"
        )
    design.x = design.x[:, kept]
    design.covariates = [design.covariates[j - 1] for j in kept if j > 0]


def _fit_without_separation(design: Design, y: np.ndarray, cov_type: CovType) -> LogitFit | None:
    """The fit, after leaving out one by one the covariates that separate the outcomes.

    Under separation the likelihood keeps rising as some coefficients run off to
    infinity; the covariate whose term ``|β|·sd(x)`` has run furthest is the one doing
    it. It is left out with a note and the model refitted; ``None`` if none is left.
    """
    while True:
        fit = fit_logit(design.x, y, cov_type=cov_type)
        if not fit.separated:
            return fit
        if not design.covariates:
            return None
        spread = np.abs(fit.coef[1:]) * design.x[:, 1:].std(axis=0)
        worst = int(np.argmax(spread))
        design.notes.append(
            f"{design.covariates[worst].description} separates agreements from "
            "disagreements (some of its values occur with one outcome only, and the "
            "likelihood has no maximum with it): left out, the model refitted without it"
        )
        design.x = np.delete(design.x, worst + 1, axis=1)
        del design.covariates[worst]


def _rows(design: Design, fit: LogitFit, reference: str | None) -> list[dict[str, Any]]:
    low, high = fit.odds_ratio_ci()
    p_values = fit.p_values()
    adjusted = holm_adjust([float(p_values[j]) for j in range(1, len(design.covariates) + 1)])
    rows = []
    for j, covariate in enumerate(design.covariates, start=1):
        p_adj = adjusted[j - 1]
        rows.append(
            {
                "name": covariate.name,
                "description": covariate.description,
                "unit": covariate.unit or None,
                "odds_ratio": float(np.exp(fit.coef[j])),
                "ci95": [float(low[j]), float(high[j])],
                "coef": float(fit.coef[j]),
                "se": float(fit.se[j]),
                "p_value": float(p_values[j]),
                "p_adjusted": p_adj,
                "significant": bool(np.isfinite(p_adj) and p_adj < ALPHA),
                "reference": reference if covariate.name.startswith("slice:") else None,
            }
        )
    return rows


def _reference(design: Design, cases: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Who a slice's odds ratio is against: the cases in none of the modelled slices,
    named by the slices they share; ``None`` when no slice is modelled."""
    modelled = {c.name.removeprefix("slice:") for c in design.covariates if c.name[:6] == "slice:"}
    if not modelled:
        return None
    rest = [set(cases[i].get("slices") or []) for i in design.ids]
    rest = [s for s in rest if not s & modelled]
    if not rest:
        return "no case (every case is in a modelled slice)"
    shared = set.intersection(*rest)
    if shared:
        return ", ".join(f"slice {name!r}" for name in sorted(shared))
    return f"the cases in none of the slices {', '.join(map(repr, sorted(modelled)))}"


def _phrase(row: dict[str, Any]) -> str:
    more = row["odds_ratio"] > 1
    figures = f"OR {row['odds_ratio']:.2g}"
    if row["unit"]:
        figures += f" per {row['unit']}"
    figures += f" [{row['ci95'][0]:.2g}, {row['ci95'][1]:.2g}]"
    level = "higher" if more else "lower"
    figures += f", Holm-adjusted p {row['p_adjusted']:.2g}"
    if row["name"].startswith("slice:"):
        against = f" than in {row['reference']}" if row.get("reference") else ""
        return f"disagreement is {level} in {row['description']}{against}: {figures}"
    if row["name"] == "b_shown_first":
        return f"disagreement is {level} when {row['description']}: {figures}"
    return f"disagreement {'rises' if more else 'falls'} with {row['description']}: {figures}"


def strongest_sentence(section: dict[str, Any]) -> str:
    """One line naming the strongest covariate significant after Holm's correction
    (smallest p), or saying none is."""
    if section.get("covariates") is None:
        return f"not estimated: {section['notes'][-1]}"
    significant = [r for r in section["covariates"] if r["significant"]]
    if not significant:
        return (
            f"no covariate is significantly linked to disagreement after Holm's correction "
            f"over {len(section['covariates'])} tests ({section['n']} cases, "
            f"{section['disagreements']} disagreements)"
        )
    return _phrase(min(significant, key=lambda r: r["p_value"]))


def _base(design: Design, y: np.ndarray, cov_type: CovType) -> dict[str, Any]:
    return {
        "outcome": "the judge's label differs from the human label",
        "model": f"logistic regression, maximum likelihood; robust {cov_type} standard "
        "errors; 95% Wald intervals for the odds ratios; significance after Holm's "
        "correction over the covariates' Wald tests (family-wise 5%)",
        "correction": "holm",
        "reference": None,
        "n": len(y),
        "disagreements": int(y.sum()),
        "disagreement_rate": float(y.mean()) if len(y) else None,
        "covariates": None,
        "notes": design.notes,
    }


def errors_by_covariate(
    ids: Sequence[str],
    human: Sequence[Any],
    judge: Sequence[Any],
    cases: Mapping[str, Mapping[str, Any]],
    *,
    extra: Sequence[Mapping[str, Any]] | None = None,
    cov_type: CovType = "HC1",
) -> dict[str, Any]:
    """The ``errors_by_covariate`` section: one row per covariate (odds ratio, interval,
    p-value), notes on what was left out and why, and ``summary``, one sentence.

    Raises :class:`CalibrationInputError` when no labelled id is in ``cases``.
    """
    disagree = [h != j for h, j in zip(human, judge, strict=True)]
    design, y = build_design(ids, disagree, cases, extra)
    if not design.ids:
        raise CalibrationInputError(
            f"none of the {len(ids)} labelled ids is in the cases file (e.g. {ids[0]!r})"
            if ids
            else "no labelled case to explain"
        )
    section = _base(design, y, cov_type)
    events = min(int(y.sum()), len(y) - int(y.sum()))
    if len(y) < MIN_CASES or events < MIN_EACH:
        design.notes.append(
            f"{len(y)} cases with {int(y.sum())} disagreements: too few of one kind to model"
        )
    else:
        _drop_collinear(design)
        fit = _fit_without_separation(design, y, cov_type)
        if fit is None:
            design.notes.append(
                "the covariates separate agreements from disagreements (the likelihood has "
                "no maximum): no odds ratio can be estimated"
            )
        else:
            section["reference"] = _reference(design, cases)
            section["covariates"] = _rows(design, fit, section["reference"])
            if events < EVENTS_PER_COVARIATE * len(design.covariates):
                design.notes.append(
                    f"{events} cases of the rarer outcome for {len(design.covariates)} "
                    "covariates: read the intervals as rough"
                )
    section["summary"] = strongest_sentence(section)
    return section
