"""Coverage and width near a bound, with what the CLI prints (issue 46; issue 45, item 24).

    python benchmarks/ceiling_coverage.py [--reps 400] [--bootstrap 2000] [--seed 46]

(``benchmarks/small_n_intervals.py --write`` runs it too and writes its tables into
``benchmarks/small_n_intervals.md``.) Every interval is the one the CLI prints, with the
CLI's defaults (2000 resamples, seed 0, as ``judge calibrate`` and ``AnalysisOptions``
have them):

- ``kappa`` and ``ac1`` near the ceiling (two classes, true kappa 0.9 or 0.95), n = 99-400:
  :func:`benchmarks.cli_intervals.cli_kappa_intervals`, the interval
  :func:`calibration.pairs.analysis.analyse` prints, with its bootstrap vectorised (the
  same multinomial draws, so the same interval; a test checks it against ``analyse`` on
  samples with an unused class);
- the PPI++ pass rate and the human-only 0/1 mean near a high pass rate (0.9, 0.95),
  30-100 labels of 1,000 judged cases, and the PPI++ 1-5 mean on a ceiling-heavy scale
  (85% fives) at 30-100 labels and a middle-heavy one at 12-25: what
  :func:`calibration.estimates.prediction_powered.prediction_powered_summary` prints;
- ``n_eff`` of three jurors at 10-30 cases
  (:func:`calibration.agreement.effective_votes.effective_votes`, the panel's 1,000
  resamples) and the position probe's first-position win rate at 5-20 pairs
  (:func:`calibration.estimates.probe_stats.pair_rate_fields`).

Widths are read against the estimate's own real central-95% spread: the 2.5-97.5%
quantiles of ``estimate - target`` over the repetitions (PPI++'s own, not the human-only
one's). Bar: coverage at least 0.93 (within two Monte Carlo standard errors,
``2·sqrt(0.95·0.05/reps)``, of it counts as met and is marked).
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.cli_intervals import CLI_RESAMPLES, batched, cli_kappa_intervals
from benchmarks.interval_coverage import Coverage, ordinal_joint
from calibration.agreement.effective_votes import effective_votes, kish_n_eff
from calibration.agreement.kappa_variance import cell_probabilities
from calibration.estimates.prediction_powered import prediction_powered_summary
from calibration.estimates.probe_stats import pair_rate_fields

BAR = 0.93
N_EFF_REPS = 200


def _spread_set(tally: Coverage, errors: list[float]) -> Coverage:
    """The tally with its spread: the central 95% of ``estimate - target``."""
    if errors:
        low, high = np.quantile(errors, [0.025, 0.975])
        tally.spread = float(high - low)
    return tally


def ceiling_kappa(
    kappa: float, rate: float, n: int, *, reps: int, seed: int, n_bootstrap: int = CLI_RESAMPLES
) -> dict[str, Coverage]:
    """Two-class kappa and AC1 intervals of ``reps`` samples of ``n`` cases from the table
    of this kappa and pass rate on both sides; targets: the population's kappa and AC1."""
    joint = cell_probabilities(kappa, rate, rate)
    w = 1 - np.eye(2)
    targets = {"kappa": kappa, "ac1": float(batched(joint[None], "ac1", w)[0])}
    tallies = {name: Coverage(t) for name, t in targets.items()}
    errors: dict[str, list[float]] = {name: [] for name in targets}
    rng = np.random.default_rng([seed, n, int(kappa * 100), int(rate * 100)])
    for _ in range(reps):
        matrix = rng.multinomial(n, joint.ravel()).reshape(2, 2)
        cis = cli_kappa_intervals(matrix, None, np.arange(2.0), n_bootstrap=n_bootstrap)
        for name, ci in cis.items():
            tallies[name].add(ci, "kappa undefined: the labels do not vary")
            value = batched(matrix[None].astype(float), name, w)[0]
            if np.isfinite(value):
                errors[name].append(float(value) - targets[name])
    return {name: _spread_set(t, errors[name]) for name, t in tallies.items()}


def _binary_population(rate: float, n_judged: int, rng: np.random.Generator):
    human = rng.random(n_judged) < rate
    # The judge passes 95% of what people pass and 20% of what they fail.
    judge = np.where(human, rng.random(n_judged) < 0.95, rng.random(n_judged) < 0.2)
    return human, judge


def high_rate(
    rate: float, n: int, *, reps: int, seed: int, judged: int = 1000
) -> dict[str, Coverage]:
    """The PPI++ pass rate, the human-only pass rate (Wilson) and the human-only mean of
    0/1 scores near a high pass rate: ``n`` labels of ``judged`` cases; target: the human
    pass rate over the judged cases."""
    rng = np.random.default_rng([seed, n, int(rate * 100), judged])
    keys = ("ppi_rate", "human_rate", "human_mean_01", "ppi_mean_01")
    tallies = {k: Coverage(rate) for k in keys}
    errors: dict[str, list[float]] = {k: [] for k in keys}
    scores = {"pass": 1.0, "fail": 0.0}
    for _ in range(reps):
        human, judge = _binary_population(rate, judged, rng)
        records = [
            {"id": f"c{i}", "label": "pass" if j else "fail", "score": float(j)}
            for i, j in enumerate(judge)
        ]
        labelled = rng.choice(judged, size=n, replace=False)
        rows = [{"id": f"c{i}", "label": "pass" if human[i] else "fail"} for i in labelled]
        block = prediction_powered_summary(
            records, rows, positive_label="pass", label_scores=scores, labels=["fail", "pass"]
        )["overall"]
        target = float(np.mean(human))
        found = {
            "ppi_rate": block["pass_rate"]["ppi"],
            "human_rate": block["pass_rate"]["human_only"],
            "human_mean_01": block["mean_score"]["human_only"],
            "ppi_mean_01": block["mean_score"]["ppi"],
        }
        for key, est in found.items():
            tallies[key].add(est["ci95"], None, target)
            errors[key].append(est["estimate"] - target)
    return {k: _spread_set(t, errors[k]) for k, t in tallies.items()}


def ppi_mean_label(
    human: str, n: int, *, reps: int, seed: int, judged: int = 1000
) -> dict[str, Coverage]:
    """The PPI++ and human-only intervals of a 1-5 mean label (an accurate judge), each
    against the human mean over the judged cases and its own real spread."""
    joint = ordinal_joint(human, "accurate")
    rng = np.random.default_rng([seed, n, judged, len(human)])
    mean = float(joint.sum(axis=1) @ np.arange(1, 6) / joint.sum())
    tallies = {k: Coverage(mean) for k in ("ppi", "human")}
    errors: dict[str, list[float]] = {k: [] for k in tallies}
    scale = ["1", "2", "3", "4", "5"]
    for _ in range(reps):
        cells = rng.choice(25, size=judged, p=joint.ravel() / joint.sum())
        h, j = cells // 5, cells % 5
        records = [{"id": f"c{i}", "label": scale[v], "score": v / 4} for i, v in enumerate(j)]
        labelled = rng.choice(judged, size=n, replace=False)
        rows = [{"id": f"c{i}", "label": scale[h[i]]} for i in labelled]
        est = prediction_powered_summary(records, rows, labels=scale)["overall"]["mean_label"]
        target = float(np.mean(h)) + 1
        for key, block in (("ppi", est["ppi"]), ("human", est["human_only"])):
            tallies[key].add(block["ci95"], est.get("reason"), target)
            errors[key].append(block["estimate"] - target)
    return {k: _spread_set(t, errors[k]) for k, t in tallies.items()}


def juror_rho(accuracy: float, rate: float) -> float:
    """Correlation of two jurors' 0/1 verdicts, each the truth (pass rate ``rate``) with
    probability ``accuracy`` and a fair coin otherwise: ``a² π(1-π) / (q(1-q))``,
    ``q = aπ + (1-a)/2``."""
    q = accuracy * rate + (1 - accuracy) / 2
    return accuracy**2 * rate * (1 - rate) / (q * (1 - q))


def n_eff_coverage(
    accuracy: float, rate: float, n: int, *, reps: int, seed: int, n_boot: int = 1000
) -> Coverage:
    """``n_eff_ci95`` of three such jurors' verdicts on ``n`` cases against the
    population's Kish n_eff."""
    tally = Coverage(kish_n_eff(3, juror_rho(accuracy, rate)))
    rng = np.random.default_rng([seed, n, int(accuracy * 100), int(rate * 100)])
    errors = []
    for _ in range(reps):
        truth = rng.random(n) < rate
        keep = rng.random((n, 3)) < accuracy
        votes = np.where(keep, truth[:, None], rng.random((n, 3)) < 0.5).astype(float)
        found = effective_votes(votes, n_boot=n_boot)
        tally.add(found["n_eff_ci95"], found["n_eff_ci95_reason"] or "n_eff undefined")
        if found["n_eff"] is not None:
            errors.append(found["n_eff"] - tally.target)
    return _spread_set(tally, errors)


# A pair's outcome (first-slot wins, decisive verdicts) and its chance: no preference, a
# mild and a strong one, and a judge that often ties.
PROBE_SETTINGS: dict[str, dict[tuple[int, int], float]] = {
    "no preference": {(0, 2): 0.1, (2, 2): 0.1, (1, 2): 0.8},
    "mild preference": {(2, 2): 0.3, (0, 2): 0.05, (1, 2): 0.6, (1, 1): 0.05},
    "strong preference": {(2, 2): 0.6, (1, 2): 0.35, (1, 1): 0.05},
    "many ties": {(2, 2): 0.2, (1, 2): 0.5, (0, 2): 0.1, (0, 1): 0.1, (0, 0): 0.1},
}


def probe_coverage(setting: str, pairs: int, *, reps: int, seed: int) -> Coverage:
    """``first_position_win_rate_ci95`` of ``pairs`` pairs against ``E[wins]/E[verdicts]``."""
    outcomes = PROBE_SETTINGS[setting]
    kinds = list(outcomes)
    p = np.array([outcomes[o] for o in kinds])
    tally = Coverage(
        sum(w * q for (w, _), q in outcomes.items()) / sum(v * q for (_, v), q in outcomes.items())
    )
    rng = np.random.default_rng([seed, pairs, len(setting)])
    errors = []
    for _ in range(reps):
        pick = rng.choice(len(kinds), size=pairs, p=p)
        wins, trials = [kinds[i][0] for i in pick], [kinds[i][1] for i in pick]
        found = pair_rate_fields("rate", wins, trials)
        tally.add(found["rate_ci95"], "no decisive verdict")
        if found["rate"] is not None:
            errors.append(found["rate"] - tally.target)
    return _spread_set(tally, errors)


COLUMNS = ("interval", "setting", "n", "target", "coverage / mean width (x its spread)", "bar")


def tables(
    reps: int, n_bootstrap: int = CLI_RESAMPLES, seed: int = 46, *, n_eff_reps: int = N_EFF_REPS
) -> tuple[str, list[str]]:
    """Every cell as one Markdown table, and the cells under the bar (beyond two Monte
    Carlo standard errors)."""
    rows: list[str] = []
    bad: list[str] = []

    def record(name: str, setting: str, n: int, t: Coverage, width_bar: float | None = None):
        slack = 2 * math.sqrt(0.95 * 0.05 / max(1, t.defined))
        met = t.defined and t.coverage >= BAR
        near = t.defined and t.coverage >= BAR - slack
        mark = "met" if met else ("within 2 MC s.e." if near else "UNDER")
        if width_bar is not None and math.isfinite(t.width_ratio):
            mark += f"; width {'<=' if t.width_ratio <= width_bar else '>'} {width_bar}x"
            if t.width_ratio > width_bar:
                bad.append(f"{name} {setting} n={n}: width {t.width_ratio:.2f}x > {width_bar}x")
        if not near:
            bad.append(f"{name} {setting} n={n}: coverage {t.coverage:.3f} < {BAR}")
        rows.append(f"| {name} | {setting} | {n} | {t.target:.3f} | {t.cell()} | {mark} |")

    for kappa, rate in ((0.9, 0.5), (0.9, 0.3), (0.95, 0.5)):
        for n in (99, 100, 150, 200, 300, 400):
            found = ceiling_kappa(kappa, rate, n, reps=reps, seed=seed, n_bootstrap=n_bootstrap)
            for name, t in found.items():
                record(f"`{name}_ci95`", f"kappa {kappa}, pass rate {rate} both sides", n, t, 1.5)
    for rate in (0.9, 0.95):
        for n in (30, 50, 100):
            found = high_rate(rate, n, reps=reps, seed=seed)
            for name, t in found.items():
                record(f"`{name}`", f"pass rate {rate}, 1,000 judged", n, t)
    for human, sizes in (("steep_ceiling", (30, 50, 100)), ("even", (12, 18, 25))):
        for n in sizes:
            for name, t in ppi_mean_label(human, n, reps=reps, seed=seed).items():
                width = 1.5 if name == "ppi" else None
                record(f"`mean_label.{name}`", f"{human} 1-5 labels, 1,000 judged", n, t, width)
    for accuracy, rate in ((0.4, 0.5), (0.6, 0.5), (0.8, 0.5)):
        for n in (10, 20, 30):
            # n_eff's 1,000 resamples a sample are a Python loop: fewer samples a cell.
            t = n_eff_coverage(accuracy, rate, n, reps=min(reps, n_eff_reps), seed=seed)
            record("`n_eff_ci95`", f"3 jurors, accuracy {accuracy}, pass rate {rate}", n, t)
    for setting in PROBE_SETTINGS:
        for pairs in (5, 10, 20):
            t = probe_coverage(setting, pairs, reps=reps, seed=seed)
            record("`first_position_win_rate_ci95`", setting, pairs, t)
    head = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(head + rows), bad


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--bootstrap", type=int, default=CLI_RESAMPLES)
    parser.add_argument("--seed", type=int, default=46)
    args = parser.parse_args(argv)
    body, bad = tables(args.reps, args.bootstrap, args.seed)
    print(body)
    print("\n".join(bad) if bad else "every cell meets its bar")
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
