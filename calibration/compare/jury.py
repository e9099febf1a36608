"""A panel of judges and each of its jurors against the same human labels, side by side.

Every member (each juror and the panel) is measured on the same cases, every human-
labelled case: a case a member gave no label (a juror's failure, the panel's
`no_majority` or short panel) counts as the label `(none)`, a disagreement with people,
so no member looks better by dropping the cases it could not decide (its `coverage` says
how many it decided). For each member: Cohen's kappa with its percentile bootstrap
interval, Gwet's AC1 and accuracy. The panel is then compared with its best juror (by
kappa) against every juror at once (:mod:`calibration.compare.panel_vs_best`: a paired
bootstrap of each kappa difference with a max-statistic simultaneous interval, so choosing
the best juror on the same labels is no winner's curse), and the correlation of the jurors' errors says
whether they fail on the same cases (the reason a panel may not beat its best member).
Learned weights (Dawid-Skene confusions from a dev half of the labelled cases) are judged
on the other half against the vote and the best juror (`learned_weights`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.agreement.coefficients import gwet_ac1
from calibration.agreement.effective_votes import N_EFF_METHOD, effective_votes
from calibration.agreement.metrics import confusion, kappa_from_confusion
from calibration.compare.judges import compare_judges
from calibration.compare.panel_vs_best import panel_vs_jurors
from calibration.estimates.dawid_skene import class_prior, juror_confusions, posterior_labels
from calibration.inference.intervals import DEFAULT_RESAMPLES

__all__ = ["NO_LABEL", "error_correlation", "jury_vs_humans", "learned_weights"]

NO_LABEL = "(none)"


def error_correlation(human: Sequence[str], members: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Pearson correlation of every pair of jurors' error indicators (1 where the juror's
    label differs from the human's, 0 where it agrees), and their mean. A pair where either
    juror is always right (or always wrong) has no correlation (``None``). Near 0:
    independent errors, which a majority can outvote; near 1: shared errors, which it
    cannot. ``n_eff``: Kish's effective number of votes from the mean, in ``[1, k]``, with a
    bootstrap interval over cases and its bias estimate
    (:func:`calibration.agreement.effective_votes.effective_votes`): how many jurors' worth
    of independent errors the panel has (errors that avoid each other count as ``k``)."""
    errors = {
        n: np.array([a != h for a, h in zip(v, human, strict=True)], dtype=float)
        for n, v in members.items()
    }
    pairs: dict[str, float | None] = {}
    for a, b in itertools.combinations(errors, 2):
        x, y = errors[a], errors[b]
        ok = np.ptp(x) > 0 and np.ptp(y) > 0
        pairs[f"{a}~{b}"] = round(float(np.corrcoef(x, y)[0, 1]), 6) if ok else None
    votes = effective_votes(np.column_stack(list(errors.values())) if errors else np.empty((0, 0)))
    return {
        "pairs": pairs,
        "mean": votes["mean_correlation"],
        "n_eff": votes["n_eff"],
        "n_eff_ci95": votes["n_eff_ci95"],
        "n_eff_bias": votes["n_eff_bias"],
        "n_eff_note": votes["n_eff_note"],
        "n_eff_ci95_reason": votes["n_eff_ci95_reason"],
        "n_eff_method": N_EFF_METHOD,
    }


def jury_vs_humans(
    ids: Sequence[str],
    human: Sequence[str],
    jurors: Mapping[str, Sequence[str | None]],
    panel: Sequence[str | None],
    *,
    labels: Sequence[str],
    n_bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Each juror's and the panel's agreement with people on the same cases (module doc),
    the panel against its best juror, and the correlation of the jurors' errors.
    ``verdict``: ``better`` when the panel is significantly better than its best juror,
    ``worse`` when significantly worse, else ``no_difference``."""
    order = [*labels, NO_LABEL]
    members = {name: _filled(v) for name, v in jurors.items()}
    members["panel"] = _filled(panel)
    per_member: dict[str, dict[str, Any]] = {}
    for name, values in members.items():
        figures = compare_judges(
            ids, human, values, values, labels=order, n_bootstrap=n_bootstrap, seed=seed
        )["baseline"]
        per_member[name] = {
            "kappa": _round(figures["kappa"]),
            "kappa_ci95": _pair(figures["kappa_ci95"]),
            "ac1": _round(gwet_ac1(human, values, labels=order)),
            "accuracy": _round(figures["accuracy"]),
            "coverage": _round(sum(v != NO_LABEL for v in values) / len(values)),
        }
    code = {label: i for i, label in enumerate(order)}
    codes = {name: np.array([code[v] for v in values]) for name, values in members.items()}
    versus = panel_vs_jurors(
        np.array([code[v] for v in human]),
        codes["panel"],
        {name: codes[name] for name in jurors},
        k=len(order),
        n_bootstrap=n_bootstrap,
        seed=seed,
        alpha=alpha,
    )
    return {
        "n": len(ids),
        "members": per_member,
        "best_juror": versus["best_juror"],
        "panel_vs_best": {
            "kappa_difference": _round(versus["kappa_difference"]),
            "kappa_difference_ci95": _pair(versus["kappa_difference_ci95"]),
            "mcnemar": versus["mcnemar"],
            "verdict": versus["verdict"],
            "method": versus["method"],
            "per_juror": {
                name: {
                    "kappa_difference": _round(row["kappa_difference"]),
                    "kappa_difference_ci95": _pair(row["kappa_difference_ci95"]),
                    "mcnemar_p": row["mcnemar_p"],
                }
                for name, row in versus["per_juror"].items()
            },
        },
        "error_correlation": error_correlation(human, {n: members[n] for n in jurors}),
        "learned_weights": learned_weights(
            ids, human, jurors, panel, labels=labels, n_bootstrap=n_bootstrap, seed=seed
        ),
        "missing_label": NO_LABEL,
    }


def learned_weights(
    ids: Sequence[str],
    human: Sequence[str],
    jurors: Mapping[str, Sequence[str | None]],
    panel: Sequence[str | None],
    *,
    labels: Sequence[str],
    n_bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any] | None:
    """Dawid-Skene weights learned on a seeded half of the labelled cases (the dev split:
    each juror's confusion and the class prior, calibration.estimates.dawid_skene), judged
    on the other half (the test split) against the panel's vote and every juror: kappa of
    each on the test cases, and the learned panel against the vote and against the best
    juror on the test split (paired bootstrap and McNemar). ``None`` under 20 cases."""
    n = len(ids)
    if n < 20:
        return None
    order = np.random.default_rng(seed).permutation(n)
    dev, test = sorted(order[: n // 2]), sorted(order[n // 2 :])
    pick = lambda values, rows: [values[i] for i in rows]  # noqa: E731
    confusions = juror_confusions(
        pick(human, dev), {j: pick(v, dev) for j, v in jurors.items()}, labels=labels
    )
    prior = class_prior(pick(human, dev), labels=labels)
    test_jurors = {j: pick(v, test) for j, v in jurors.items()}
    learned = posterior_labels(test_jurors, confusions, prior, labels=labels)
    order_labels = [*labels, NO_LABEL]
    h, test_ids = pick(human, test), pick(ids, test)
    columns = {j: _filled(v) for j, v in test_jurors.items()}
    columns["vote"] = _filled(pick(panel, test))
    columns["learned"] = _filled(learned)

    def versus(baseline: str) -> dict[str, Any]:
        result = compare_judges(
            test_ids,
            h,
            columns[baseline],
            columns["learned"],
            labels=order_labels,
            n_bootstrap=n_bootstrap,
            seed=seed,
            alpha=alpha,
        )
        return {
            "kappa_difference": _round(result["difference"]["kappa"]),
            "kappa_difference_ci95": _pair(result["difference"]["kappa_ci95"]),
            "mcnemar_p": result["mcnemar"]["p_value"],
            "verdict": result["verdict"],
        }

    kappas = {
        name: _round(kappa_from_confusion(confusion(h, v, labels=order_labels)))
        for name, v in columns.items()
    }
    best = max(jurors, key=lambda j: (_finite(kappas[j]), -list(jurors).index(j)))
    return {
        "dev": len(dev),
        "test": len(test),
        "seed": seed,
        "confusions": {
            j: {"labels": list(labels), "matrix": np.round(m, 6).tolist()}
            for j, m in confusions.items()
        },
        "prior": np.round(prior, 6).tolist(),
        "kappa_on_test": kappas,
        "best_juror_on_test": best,
        "learned_vs_vote": versus("vote"),
        "learned_vs_best": versus(best),
    }


def _filled(values: Sequence[str | None]) -> list[str]:
    return [NO_LABEL if v is None else v for v in values]


def _finite(value: float | None) -> float:
    return -np.inf if value is None else value


def _round(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 6)


def _pair(ci: Any) -> list[float] | None:
    if ci is None or not all(np.isfinite(ci)):
        return None
    return [round(float(ci[0]), 6), round(float(ci[1]), 6)]
