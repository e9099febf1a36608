"""Coverage of the jury's `n_eff` interval (`calibration.agreement.effective_votes`) when
the jurors' errors are shared on hard cases, at 10-30 cases, 3 and 5 jurors.

    nice -n 10 python benchmarks/n_eff_coverage.py [--reps 200] [--seed 53] [--write]

Each replicate: ``n`` cases, each hard with probability ``h``; every juror errs with
probability ``p_hard`` on a hard case and ``p_easy`` on another (errors correlated through
the hard cases), or the planting of `benchmarks/jury.py` (jurors a and b share their
errors, 20% and 25%; the others err on 15% of the remaining cases). `effective_votes` of
the 0/1 error table (`n_eff_errors`, 1,000 resamples) against Kish's n_eff of the mean
pairwise correlation of 400,000 cases. Reported: coverage, the share of intervals that
are the whole range [1, k], and the mean width. The interval was changed on `hard`; the
other two models were run after that change only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from calibration.agreement.effective_votes import (  # noqa: E402
    effective_votes,
    kish_n_eff,
    mean_pairwise_correlation,
)


def hard_cases(h: float, p_hard: float, p_easy: float):
    def draw(rng, n: int, k: int) -> np.ndarray:
        p = np.where(rng.random(n) < h, p_hard, p_easy)[:, None]
        return (rng.random((n, k)) < p).astype(float)

    return draw


def planted(rng, n: int, k: int) -> np.ndarray:
    u = rng.random(n)
    a = u < 0.2
    b = a | (u < 0.25)
    others = [(~b) & (rng.random(n) < 0.15 / 0.75) for _ in range(k - 2)]
    return np.stack([a, b, *others], axis=1).astype(float)


MODELS = {
    "hard (h 0.2, 0.6 / 0.08)": hard_cases(0.2, 0.6, 0.08),
    "jury.py planting": planted,
    "hard (h 0.3, 0.45 / 0.05)": hard_cases(0.3, 0.45, 0.05),
}


def cell(rng, model, k: int, n: int, reps: int, target: float) -> tuple[float, float, float]:
    hits = whole = 0
    widths = []
    for _ in range(reps):
        ci = effective_votes(model(rng, n, k), n_boot=1000)["n_eff_ci95"]
        hits += ci is not None and ci[0] <= target <= ci[1]
        if ci is not None:
            widths.append(ci[1] - ci[0])
            whole += ci[0] <= 1 + 1e-9 and ci[1] >= k - 1e-9
    return hits / reps, whole / reps, float(np.mean(widths)) if widths else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = []
    for name, model in MODELS.items():
        for k in (3, 5):
            target = kish_n_eff(k, mean_pairwise_correlation(model(rng, 400_000, k)))
            for n in (10, 20, 30):
                cov, whole, width = cell(rng, model, k, n, args.reps, target)
                rows.append(f"| {name} | {k} | {n} | {target:.2f} | {cov:.3f} | {whole:.2f} "
                            f"| {width:.2f} of {k - 1} |")  # fmt: skip
                print(rows[-1], flush=True)
    text = "\n".join([
        "# `n_eff` interval: coverage when errors are shared on hard cases",
        "",
        f"`nice -n 10 python benchmarks/n_eff_coverage.py --reps {args.reps} --seed "
        f"{args.seed} --write` ({time.perf_counter() - started:.0f} s). Bar: 0.93.",
        "",
        "| error model | jurors | cases | true n_eff | coverage | whole range [1, k] "
        "| mean width |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
    ]) + "\n"  # fmt: skip
    print(text)
    if args.write:
        (REPO / "benchmarks" / "n_eff_coverage.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
