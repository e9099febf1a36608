"""Coverage of the small-sample intervals on synthetic data with a known truth (issue 34).

    python benchmarks/interval_coverage.py [--reps 400] [--bootstrap 2000] [--seed 0]

(``benchmarks/small_n_intervals.py --write`` runs it too and writes its tables into
``benchmarks/small_n_intervals.md``.)

Four settings, each drawn from a population whose figure is known exactly:

- ``weighted_kappa``: five ordinal classes (1-5), linear and quadratic weights, an
  accurate, a middling and a noisy judge (the judge's label drawn from
  ``exp(-|i - j| / τ)`` around the human one, ``τ`` 0.5, 0.8 or 1.5), n = 8-25; the interval
  :func:`calibration.pairs.analysis.analyse` prints; target: the population's weighted
  kappa (of the joint cell probabilities).
- ``kappa_ceiling``: two classes at a true kappa of 0.84, pass rates 0.5 and 0.3 on both
  sides, n = 40-60 (the cell probabilities of
  :func:`calibration.agreement.kappa_variance.cell_probabilities`).
- ``alpha_jurors``: three jurors, each giving the true label with probability ``a`` and a
  uniformly random one otherwise, two or three classes, n = 5-20; the interval of
  :func:`calibration.agreement.panel.panel_agreement`; target: the population's nominal
  alpha ``1 - D_o / D_e`` (exact, from the model).
- ``mean_label``: a 1-5 scale, symmetric, skewed and ceiling-heavy, n = 10-30; the
  human-only interval of the mean label of
  :func:`calibration.estimates.prediction_powered.prediction_powered_summary`; target:
  the population mean (PPI++: the human mean over the 1,000 judged cases); the width is
  also read against each estimate's own real spread, the central 95% of
  ``estimate - target`` over the samples.

Each function returns a :class:`Coverage`; the seeded tests in
``tests/unit/test_interval_coverage.py`` call them with few repetitions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.cli_intervals import CLI_SEED, cli_kappa_intervals
from calibration.agreement.kappa_variance import cell_probabilities
from calibration.agreement.metrics import _weight_matrix
from calibration.agreement.small_sample import alpha_interval
from calibration.estimates.prediction_powered import prediction_powered_summary

SCALE = ("1", "2", "3", "4", "5")
HUMAN_RATES = {
    "even": (0.10, 0.20, 0.40, 0.20, 0.10),
    "skewed": (0.05, 0.10, 0.15, 0.30, 0.40),
    "ceiling": (0.02, 0.03, 0.05, 0.20, 0.70),
    "steep_ceiling": (0.0, 0.0, 0.05, 0.10, 0.85),
}
JUDGES = {"accurate": 0.5, "middling": 0.8, "noisy": 1.5}


@dataclass
class Coverage:
    """Outcomes of one interval in one setting."""

    target: float
    defined: int = 0
    covered: int = 0
    undefined: int = 0
    widths: list[float] = field(default_factory=list)
    misses_high: int = 0  # target above the interval
    reasons: dict[str, int] = field(default_factory=dict)
    spread: float = math.nan  # 2·1.96·σ/√n where it applies

    def add(self, ci: object, reason: str | None = None, target: float | None = None) -> None:
        if not isinstance(ci, list | tuple) or not all(
            isinstance(b, int | float) and math.isfinite(b) for b in ci
        ):
            self.undefined += 1
            key = reason or "no interval, no reason"
            self.reasons[key] = self.reasons.get(key, 0) + 1
            return
        low, high = float(ci[0]), float(ci[1])
        goal = self.target if target is None else target
        self.defined += 1
        self.covered += low - 1e-9 <= goal <= high + 1e-9
        self.misses_high += goal > high + 1e-9
        self.widths.append(high - low)

    @property
    def coverage(self) -> float:
        return self.covered / self.defined if self.defined else math.nan

    @property
    def mean_width(self) -> float:
        return float(np.mean(self.widths)) if self.widths else math.nan

    @property
    def width_ratio(self) -> float:
        return self.mean_width / self.spread if self.spread > 0 else math.nan

    def cell(self) -> str:
        if not self.defined:
            return f"no interval ({self.undefined})"
        text = f"{self.coverage:.3f} / {self.mean_width:.2f}"
        if math.isfinite(self.width_ratio):
            text += f" ({self.width_ratio:.2f}x)"
        if self.undefined:
            text += f"; {self.undefined} none"
        return text


def _labels(matrix: np.ndarray, names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    human, judge = [], []
    for (i, j), count in np.ndenumerate(matrix):
        human += [names[i]] * int(count)
        judge += [names[j]] * int(count)
    return human, judge


def ordinal_joint(human: str, judge: str) -> np.ndarray:
    """The 5 x 5 cell probabilities: human rates ``HUMAN_RATES[human]``, the judge's label
    ``∝ exp(-|i - j| / τ)`` around the human one (``τ = JUDGES[judge]``)."""
    p = np.asarray(HUMAN_RATES[human])
    d = np.abs(np.arange(5)[:, None] - np.arange(5)[None, :])
    kernel = np.exp(-d / JUDGES[judge])
    return p[:, None] * kernel / kernel.sum(axis=1, keepdims=True)


def _table_reps(joint: np.ndarray, n: int, reps: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        yield rng.multinomial(n, joint.ravel() / joint.sum()).reshape(joint.shape)


def _kappas(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted kappa ``1 - Σ w O / Σ w E`` of each ``k x k`` table in ``tables``
    (vectorised :func:`~calibration.agreement.metrics.kappa_from_confusion`)."""
    n = tables.sum(axis=(1, 2))
    expected = np.einsum("bi,bj->bij", tables.sum(axis=2), tables.sum(axis=1)) / n[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - (w * tables).sum(axis=(1, 2)) / (w * expected).sum(axis=(1, 2))


def kappa_interval(
    matrix: np.ndarray, weights: str | None, *, n_bootstrap: int, seed: int = CLI_SEED
) -> tuple[float, float] | None:
    """The (weighted) kappa interval ``judge calibrate`` prints for the cases behind this
    1-5 (or two-class) table: :func:`benchmarks.cli_intervals.cli_kappa_intervals`."""
    values = np.arange(1.0, len(matrix) + 1)
    found = cli_kappa_intervals(matrix, weights, values, n_bootstrap=n_bootstrap, seed=seed)
    return found["kappa" if weights is None else "weighted_kappa"]


def weighted_kappa_coverage(
    human: str, judge: str, weights: str, n: int, *, reps: int, n_bootstrap: int, seed: int
) -> Coverage:
    """The printed weighted kappa interval against the population's weighted kappa."""
    joint = ordinal_joint(human, judge)
    values = np.arange(1, 6)
    w = _weight_matrix(5, weights, values)  # type: ignore[arg-type]
    target = float(_kappas(joint[None], w)[0])
    return _kappa_coverage(joint, weights, target, n, reps=reps, n_bootstrap=n_bootstrap, seed=seed)


def ceiling_kappa_coverage(
    rate: float, n: int, *, kappa: float = 0.84, reps: int, n_bootstrap: int, seed: int
) -> Coverage:
    """Two-class kappa near its ceiling: the printed interval against the true kappa."""
    joint = cell_probabilities(kappa, rate, rate)
    return _kappa_coverage(joint, None, kappa, n, reps=reps, n_bootstrap=n_bootstrap, seed=seed)


def _kappa_coverage(
    joint: np.ndarray,
    weights: str | None,
    target: float,
    n: int,
    *,
    reps: int,
    n_bootstrap: int,
    seed: int,
) -> Coverage:
    """The printed (weighted) kappa interval of ``reps`` samples of ``n`` cases drawn from
    ``joint``, against ``target``; a sample whose kappa is undefined counts as such. Each
    sample's interval is drawn on the CLI's seed, as ``judge calibrate`` would draw it."""
    tally = Coverage(target)
    for matrix in _table_reps(joint, n, reps, seed):
        ci = kappa_interval(matrix, weights, n_bootstrap=n_bootstrap)
        tally.add(ci, None if ci is not None else "kappa undefined: the labels do not vary")
    return tally


def juror_alpha(accuracy: float, classes: int, rates: tuple[float, ...] | None = None) -> float:
    """Population nominal alpha of jurors who each give the true label with probability
    ``accuracy`` and a uniformly random one otherwise: ``1 - D_o / D_e``, ``D_o`` the chance
    two jurors disagree on one case, ``D_e`` that two votes on different cases do."""
    p = np.full(classes, 1 / classes) if rates is None else np.asarray(rates)
    q = accuracy * np.eye(classes) + (1 - accuracy) / classes  # q[t, c] = P(vote c | truth t)
    observed = float(p @ (1 - (q**2).sum(axis=1)))
    expected = 1 - float(((p @ q) ** 2).sum())
    return 1 - observed / expected


def _alphas(counts: np.ndarray) -> np.ndarray:
    """Nominal alpha of each items x categories table in ``counts`` (every item rated by
    the same number of jurors): ``1 - (N - 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k``."""
    m = counts.sum(axis=2, keepdims=True)
    o = np.einsum("buc,buk->bck", counts / (m - 1), counts)  # its diagonal is not used
    n_c = counts.sum(axis=1)
    total = n_c.sum(axis=1)
    off = ~np.eye(counts.shape[2], dtype=bool)
    observed = o[:, off].sum(axis=1)
    expected = (np.einsum("bc,bk->bck", n_c, n_c))[:, off].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - (total - 1) * observed / expected


def alpha_ci(counts: np.ndarray, *, n_bootstrap: int, seed: int) -> tuple[Any, str | None]:
    """The interval :func:`calibration.agreement.panel.panel_agreement` prints for these
    rating counts (its case bootstrap vectorised): ``(ci, reason)``."""
    rng = np.random.default_rng(seed)
    n = len(counts)
    draws = _alphas(counts[rng.integers(0, n, (n_bootstrap, n))])
    draws = draws[np.isfinite(draws)]
    boot = None
    if n >= 2 and len(draws) >= n_bootstrap / 2:
        boot = [round(float(b), 6) for b in np.percentile(draws, [2.5, 97.5])]
    interval = alpha_interval(boot, counts)
    return interval.ci, interval.reason


def alpha_coverage(
    accuracy: float,
    classes: int,
    n: int,
    *,
    jurors: int = 3,
    rates: tuple[float, ...] | None = None,
    reps: int,
    n_bootstrap: int,
    seed: int,
) -> Coverage:
    """The panel's alpha interval against the population alpha."""
    rng = np.random.default_rng(seed)
    p = np.full(classes, 1 / classes) if rates is None else np.asarray(rates)
    tally = Coverage(juror_alpha(accuracy, classes, rates))
    for rep in range(reps):
        truth = rng.choice(classes, size=n, p=p)
        keep = rng.random((n, jurors)) < accuracy
        votes = np.where(keep, truth[:, None], rng.integers(0, classes, (n, jurors)))
        counts = np.zeros((n, classes))
        np.add.at(counts, (np.repeat(np.arange(n), jurors), votes.ravel()), 1)
        tally.add(*alpha_ci(counts, n_bootstrap=n_bootstrap, seed=seed + rep))
    return tally


def panel_labels(counts: np.ndarray) -> list[list[str]]:
    """Rows of juror labels with these rating counts (for :func:`panel_agreement`)."""
    return [[f"c{c}" for c, k in enumerate(row) for _ in range(int(k))] for row in counts]


def mean_label_coverage(
    human: str, n: int, *, reps: int, seed: int, judged: int = 1000
) -> dict[str, Coverage]:
    """The human-only and PPI++ intervals of the 1-5 mean label against the population
    mean (PPI++: the human mean over the judged cases, what it estimates), each with its
    own real spread: the central 95% of ``estimate - target`` over the samples."""
    p = np.asarray(HUMAN_RATES[human])
    mean = float(p @ np.arange(1, 6))
    joint = ordinal_joint(human, "accurate")
    out = {name: Coverage(mean) for name in ("human", "ppi")}
    errors: dict[str, list[float]] = {name: [] for name in out}
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        cells = rng.choice(25, size=judged, p=joint.ravel())
        h, j = cells // 5, cells % 5
        records = [{"id": f"c{i}", "label": SCALE[v], "score": v / 4} for i, v in enumerate(j)]
        labelled = rng.choice(judged, size=n, replace=False)
        rows = [{"id": f"c{i}", "label": SCALE[h[i]]} for i in labelled]
        block = prediction_powered_summary(records, rows, labels=list(SCALE))["overall"]
        est = block["mean_label"]
        out["human"].add(est["human_only"]["ci95"], est.get("reason"))
        errors["human"].append(est["human_only"]["estimate"] - mean)
        # PPI++ estimates the human mean over the judged cases.
        judged_mean = float(np.mean(h)) + 1
        out["ppi"].add(est["ppi"]["ci95"], est.get("reason"), judged_mean)
        errors["ppi"].append(est["ppi"]["estimate"] - judged_mean)
    for name, tally in out.items():
        low, high = np.quantile(errors[name], [0.025, 0.975])
        tally.spread = float(high - low)
    return out


COLUMNS = ("setting", "n", "target", "coverage / mean width", "misses above", "bar")


def _row(setting: str, n: int, tally: Coverage, bar: str) -> str:
    return (
        f"| {setting} | {n} | {tally.target:.3f} | {tally.cell()} | {tally.misses_high} | {bar} |"
    )


def tables(reps: int, n_bootstrap: int, seed: int = 0) -> tuple[str, list[str]]:
    """Every setting as Markdown tables, and what misses the issue's bars."""
    head = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines: list[str] = []
    bad: list[str] = []

    def record(section: list[str], setting: str, n: int, tally: Coverage, bar: float) -> None:
        section.append(_row(setting, n, tally, f">= {bar}"))
        if tally.defined and tally.coverage < bar:
            bad.append(f"{setting} n={n}: coverage {tally.coverage:.3f} < {bar}")

    wk: list[str] = []
    for human in ("even", "skewed", "ceiling"):
        for judge in JUDGES:
            for weights in ("linear", "quadratic"):
                for n in (8, 12, 18, 25):
                    t = weighted_kappa_coverage(
                        human, judge, weights, n, reps=reps, n_bootstrap=n_bootstrap, seed=seed
                    )
                    record(wk, f"{human} humans, {judge} judge, {weights}", n, t, 0.93)
    ceiling: list[str] = []
    for rate in (0.5, 0.3):
        for n in (40, 50, 60):
            t = ceiling_kappa_coverage(rate, n, reps=reps, n_bootstrap=n_bootstrap, seed=seed)
            record(ceiling, f"kappa 0.84, pass rate {rate}", n, t, 0.93)
    alpha: list[str] = []
    for accuracy, classes in ((0.8, 2), (0.5, 2), (0.6, 3), (0.9, 3)):
        for n in (5, 8, 10, 20):
            t = alpha_coverage(accuracy, classes, n, reps=reps, n_bootstrap=n_bootstrap, seed=seed)
            record(alpha, f"3 jurors, accuracy {accuracy}, {classes} classes", n, t, 0.90)
    means: list[str] = []
    for human in HUMAN_RATES:
        for n in (10, 20, 30):
            for name, t in mean_label_coverage(human, n, reps=reps, seed=seed).items():
                record(means, f"{human} 1-5 labels, {name}", n, t, 0.93)
                if t.width_ratio > 1.5:
                    bad.append(f"{human} n={n} {name}: width {t.width_ratio:.2f}x > 1.5x")
    for title, section in (
        ("Weighted kappa, five classes (`weighted_kappa_ci95`)", wk),
        ("Two-class kappa near its ceiling (`kappa_ci95`)", ceiling),
        ("Krippendorff's alpha over jurors (`krippendorff_alpha_ci95`)", alpha),
        (
            "Mean of a 1-5 label (`mean_label.human_only.ci95`, `mean_label.ppi.ci95`; "
            "width also as a multiple of the estimate's own real central-95% spread)",
            means,
        ),
    ):
        lines += ["", f"### {title}", "", *head, *section]
    return "\n".join(lines), bad


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    body, bad = tables(args.reps, args.bootstrap, args.seed)
    print(body)
    print("\n".join(bad) if bad else "every setting meets its bar")
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
