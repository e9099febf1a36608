"""Validity and coverage of `judge certify`'s thresholds, against the published method
(Trust or Escalate's `cascaded_evaluation`, replicated below) on the same draws.

    nice -n 10 python benchmarks/certify.py [--draws 1000] [--seed 50] [--write]
    nice -n 10 python benchmarks/certify.py --settings held-out --draws 1000 --seed 51

A setting is a population of cases graded by one judge or a cascade of two (a cheap one,
then a strong one); a judge's confidence on a case is ``c = 0.5 + 0.5 B`` with ``B`` a Beta
draw (two labels: the probability of the label written), the two judges' confidences
tied by a Gaussian copula (rho 0.5: they find the same cases hard), and the chance the
judge agrees with people ``g(c)``: ``c`` for a calibrated judge; ``1 - 2(1 - c)`` for an
over-confident one (its disagreements twice what it says), and with a ceiling for a
judge that disagrees on a share of cases whatever its confidence. Per draw: ``n`` labelled
cases drawn from the population, thresholds chosen by each method, and the truth read off
a population of 2^18 cases drawn once (quasi-random: a scrambled Sobol sequence): the mean of ``g`` over the cases each rung
decides (true agreement of the decided cases) and the share decided (coverage).

Reported per setting and method, over ``--draws`` draws: the share of draws whose decided
cases' true agreement is below A (validity: at most delta = 0.1, within simulation
error; a draw that decides nothing cannot fail), with a Wilson interval, and the mean
true coverage. Methods, all on the same draws:

- ``published``: `cascaded_evaluation/util.py` of github.com/jaehunjung1/cascaded-selective
  -evaluation (commit 1b969f2), vectorised: a grid of 5,000 thresholds on [0, 1] kept where
  30 or more cases are decided, the bound by brentq on the binomial CDF (the Clopper-
  Pearson bound, computed here as the Beta quantile), tested from the top, each step at
  ``lam - 1/len(grid)``; when the top point fails it still returns it (the top ~30 cases
  are decided uncertified); every rung at the full delta; a rung reached by too few cases
  takes the previous rung's threshold.
- ``fine``: every distinct confidence, each rung at delta / J (Bonferroni).
- ``coarse``: `judge certify`'s default grid (calibration.certify.threshold), delta / J.
- ``coarse-δ``: the coarse grid with each rung at the full delta (to show what the split costs).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import beta, norm, qmc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from calibration.certify import certify_cascade, clopper_pearson_upper  # noqa: E402
from calibration.inference.intervals import wilson_interval  # noqa: E402

DELTA = 0.1
POPULATION_LOG2 = 18
NOTES = "<!-- notes: kept by --write -->"
METHODS: tuple[str, ...] = ("published", "every", "late", "late-δ", "relay", "pooled", "either")


@dataclass(frozen=True)
class Judge:
    """A judge's confidences ``0.5 + 0.5 Beta(a, b)`` and its agreement ``g(c)``."""

    a: float
    b: float
    kind: str  # calibrated | over | ceiling

    def agreement(self, c: np.ndarray) -> np.ndarray:
        if self.kind == "calibrated":
            return c
        if self.kind == "over":
            return np.clip(1 - 2 * (1 - c), 0.5, 1)
        return np.clip(0.985 - 1.5 * (1 - c), 0.5, 1)  # ceiling: 1.5% always disagree


@dataclass(frozen=True)
class Setting:
    name: str
    judges: tuple[Judge, ...]
    agreement: float
    n: int


CHEAP_CAL, STRONG_CAL = Judge(2.0, 1.0, "calibrated"), Judge(5.0, 1.0, "calibrated")
CHEAP_OVER, STRONG_OVER = Judge(3.0, 1.0, "over"), Judge(6.0, 1.0, "over")
SHARP = Judge(12.0, 1.0, "ceiling")


def _settings() -> list[Setting]:
    out = []
    for n in (50, 150, 500, 1000, 5000):
        out.append(Setting(f"one calibrated judge, A 0.9, n {n}", (STRONG_CAL,), 0.9, n))
        out.append(Setting(f"one over-confident judge, A 0.9, n {n}", (STRONG_OVER,), 0.9, n))
        out.append(Setting(f"two rungs, over-confident, A 0.9, n {n}", (CHEAP_OVER, STRONG_OVER), 0.9, n))  # fmt: skip
    for n in (500, 1000, 5000):
        out.append(Setting(f"two rungs, calibrated, A 0.85, n {n}", (CHEAP_CAL, STRONG_CAL), 0.85, n))  # fmt: skip
        out.append(Setting(f"one judge with a ceiling, A 0.97, n {n}", (SHARP,), 0.97, n))
    return out


def _held_out() -> list[Setting]:
    """Settings not used while choosing the grid: other shapes, targets and sizes."""
    mild = Judge(4.0, 1.5, "over")
    return [
        Setting("held-out: one over-confident judge, A 0.8, n 300", (mild,), 0.8, 300),
        Setting("held-out: two rungs, A 0.92, n 700", (Judge(3.0, 1.2, "over"), SHARP), 0.92, 700),
        Setting(
            "held-out: three rungs, A 0.88, n 2000", (mild, CHEAP_OVER, STRONG_OVER), 0.88, 2000
        ),  # fmt: skip
        Setting("held-out: ceiling judge, A 0.96, n 1500", (SHARP,), 0.96, 1500),
    ]


def draw(rng: np.random.Generator, judges: tuple[Judge, ...], n: int, normals=None):
    """Confidences (rung x case) and whether each rung agrees with people, plus ``g``.
    ``normals`` (1 + J rows of n): the standard normals to use instead of fresh draws."""
    normals = rng.standard_normal((1 + len(judges), n)) if normals is None else normals
    z = normals[0]
    conf, truth = [], []
    for i, j in enumerate(judges, start=1):
        u = norm.cdf(0.5 * z + np.sqrt(0.75) * normals[i])
        c = 0.5 + 0.5 * beta.ppf(u, j.a, j.b)
        conf.append(c)
        truth.append(j.agreement(c))
    agrees = [rng.random(n) < g for g in truth]
    return conf, agrees, truth


def _quasi_normals(setting: Setting, seed: int) -> np.ndarray:
    """The population's normals from a scrambled Sobol sequence: the truth's integrals
    then err by far less than a plain random population of the same size."""
    sobol = qmc.Sobol(d=1 + len(setting.judges), scramble=True, seed=seed)
    u = sobol.random_base2(POPULATION_LOG2)
    return norm.ppf(np.clip(u, 1e-12, 1 - 1e-12)).T


def published_thresholds(
    conf, agrees, agreement: float, delta: float, *, honour_test: bool = False
) -> list[float]:
    """The published `CascadedClassifier.calibrate` (see the module docstring).
    ``honour_test``: the same test, but a rung whose first test fails decides nothing
    (the code decides its top grid point anyway)."""
    alpha = 1 - agreement
    n = len(conf[0])
    predicted = np.zeros(n, dtype=bool)
    out: list[float] = []
    for c, a in zip(conf, agrees, strict=True):
        cc, wrong = c[~predicted], ~a[~predicted]
        lam = _published_rung(cc, wrong, alpha, delta, honour_test)
        lam = out[-1] if lam is None else lam
        out.append(lam)
        predicted |= c >= lam
    return out


def _published_rung(
    c: np.ndarray, wrong: np.ndarray, alpha: float, delta: float, honour_test: bool = False
):
    order = np.argsort(c)
    cs, ws = c[order], wrong[order]
    tail_wrong = np.r_[np.cumsum(ws[::-1])[::-1], 0]

    def counts(lams):
        first = np.searchsorted(cs, lams, side="left")
        return len(cs) - first, tail_wrong[first]

    grid = np.linspace(0, 1, 5000, dtype=np.float32).astype(float)
    nn, _ = counts(grid)
    lambdas = grid[nn >= 30]
    if len(lambdas) == 0:
        return None  # the caller takes the previous rung's (0.0 for the first)
    n_top, k_top = counts(lambdas[-1:])
    if clopper_pearson_upper(k_top, n_top, delta=delta)[0] > alpha:
        return math.inf if honour_test else float(lambdas[-1])  # the code: decided anyway
    nxt = lambdas[::-1] - 1 / len(lambdas)
    n_next, k_next = counts(nxt)
    fails = clopper_pearson_upper(k_next, n_next, delta=delta) > alpha
    hit = np.nonzero(fails)[0]
    return float(lambdas[::-1][hit[0]]) if len(hit) else float(lambdas[0])


def _truth(pop_conf, pop_truth, thresholds) -> tuple[float | None, float]:
    """True agreement of the decided cases and true coverage, on the population."""
    taken = np.zeros(len(pop_conf[0]), dtype=bool)
    total, decided = 0.0, 0
    for c, g, t in zip(pop_conf, pop_truth, thresholds, strict=True):
        if t is None:
            continue
        mine = ~taken & (c >= t)
        total += float(g[mine].sum())
        decided += int(mine.sum())
        taken |= mine
    return (total / decided if decided else None), decided / len(taken)


def _method(name, conf, agrees, agreement):
    if name == "published":
        return published_thresholds(conf, agrees, agreement, DELTA)
    grid = name if name in ("every", "relay") else "late"
    split = {"late-δ": "none", "pooled": "pooled", "either": "either"}.get(name, "bonferroni")
    grid = "relay" if split in ("pooled", "either") else grid
    result = certify_cascade(conf, agrees, agreement=agreement, delta=DELTA, grid=grid, split=split)
    return [r.threshold for r in result.rungs]


def run_setting(setting: Setting, draws: int, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    pop_conf, _, pop_truth = draw(
        rng, setting.judges, 2**POPULATION_LOG2, _quasi_normals(setting, seed)
    )
    fails = {m: 0 for m in METHODS}
    cover = {m: 0.0 for m in METHODS}
    for _ in range(draws):
        conf, agrees, _ = draw(rng, setting.judges, setting.n)
        for m in METHODS:
            agree, coverage = _truth(
                pop_conf, pop_truth, _method(m, conf, agrees, setting.agreement)
            )
            fails[m] += agree is not None and agree < setting.agreement
            cover[m] += coverage
    return {m: {"fail": fails[m] / draws, "fails": fails[m], "coverage": cover[m] / draws}
            for m in METHODS}  # fmt: skip


def _row(setting: Setting, result, draws: int) -> str:
    cells = [setting.name]
    for m in METHODS:
        lo, hi = wilson_interval(result[m]["fails"], draws)
        cells.append(f"{result[m]['fail']:.3f} [{lo:.3f}, {hi:.3f}]")
    cells += [f"{result[m]['coverage']:.3f}" for m in METHODS]
    return "| " + " | ".join(cells) + " |"


def _header() -> str:
    return (
    "| setting | " + " | ".join(f"below A: {m}" for m in METHODS) + " | "
    + " | ".join(f"coverage: {m}" for m in METHODS) + " |\n"
    + "|---" + "|---" * (2 * len(METHODS)) + "|"
    )  # fmt: skip


HEADER = _header()


def main(argv: list[str] | None = None) -> int:
    global METHODS, HEADER
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=50)
    p.add_argument("--settings", choices=("main", "held-out"), default="main")
    p.add_argument("--only", help="run only settings whose name contains this")
    p.add_argument("--sizes", type=int, nargs="+", help="run only settings with these n")
    p.add_argument("--write", action="store_true", help="write the table into certify.md")
    p.add_argument("--methods", nargs="+", choices=METHODS, help="run only these methods")
    args = p.parse_args(argv)

    if args.methods:
        METHODS = tuple(args.methods)
        HEADER = _header()
    settings = _settings() if args.settings == "main" else _held_out()
    if args.only:
        settings = [s for s in settings if args.only in s.name]
    if args.sizes:
        settings = [s for s in settings if s.n in args.sizes]
    rows, start = [], time.perf_counter()
    print(HEADER, flush=True)
    for i, s in enumerate(settings):
        row = _row(s, run_setting(s, args.draws, args.seed + i), args.draws)
        rows.append(row)
        print(row, flush=True)
    took = time.perf_counter() - start
    print(f"# {len(settings)} settings x {args.draws} draws in {took:.0f} s", file=sys.stderr)
    if args.write:
        _write(args, rows, took)
    return 0


def _write(args, rows: list[str], took: float) -> None:
    page = Path(__file__).with_name("certify.md")
    notes = page.read_text(encoding="utf-8").split(NOTES, 1)[1] if page.exists() else "\n"
    command = (
        f"nice -n 10 python benchmarks/certify.py --settings {args.settings} "
        f"--draws {args.draws} --seed {args.seed} --write"
    )
    head = (
        "# `judge certify`: validity and coverage against the published method\n\n"
        f'`{command}` ({took:.0f} s). delta = {DELTA}. "below A": the share of draws '
        "whose decided cases' true agreement is below A (to be at most delta), with a "
        'Wilson 95% interval; "coverage": the mean true share of cases decided.\n\n'
    )
    page.write_text(head + HEADER + "\n" + "\n".join(rows) + "\n\n" + NOTES + notes, "utf-8")


if __name__ == "__main__":
    sys.exit(main())
