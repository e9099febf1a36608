"""`judge certify` against the published method on real judges' confidences with people's
labels: Trust or Escalate's own released judgements (Chatbot Arena pairs judged by
Mistral-7B-Instruct, GPT-3.5-turbo and GPT-4-turbo, `result/*.calibration.jsonl`, 500
pairs each) over random half splits: thresholds from one half, coverage and agreement with
people measured on the other.

    git clone https://github.com/jaehunjung1/cascaded-selective-evaluation /tmp/tore
    nice -n 10 python benchmarks/certify_real.py /tmp/tore [--splits 200] [--seed 5]
        [--start-factor F]

The data are not vendored (no licence is stated); the script reads a clone. A judge's
confidence is its larger probability of the two, its verdict that label; the people's
label is the majority of the pair's preferences (as the published `prepare_data`).
Reported per cascade and target A (delta = 0.1): the mean share of test cases decided
(coverage), the mean agreement with people on decided test cases (over splits that decide
something), and the share of splits where that agreement is below A.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from certify import published_thresholds  # noqa: E402

from calibration.certify import certify_cascade, decide, rung_threshold  # noqa: E402

MODELS = ("mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo")
CASCADES = {"gpt-4-turbo alone": ("gpt-4-turbo",), "mistral -> gpt-3.5 -> gpt-4": MODELS}
HELD_OUT = {  # not looked at while choosing the relay's weights
    "gpt-3.5-turbo alone": ("gpt-3.5-turbo",),
    "gpt-3.5 -> gpt-4": ("gpt-3.5-turbo", "gpt-4-turbo"),
    "mistral -> gpt-4": ("mistral-7b-instruct", "gpt-4-turbo"),
}
DELTA = 0.1
GRID = "either"


def load(folder: Path):
    """Confidence and verdict per model, and the people's label, on the pairs all judged."""
    rows: dict[str, dict[str, dict]] = {}
    for model in MODELS:
        for line in (folder / "result" / f"{model}.calibration.jsonl").open():
            d = json.loads(line)
            key = f"{d['instruction']}-{d['outputs']}"
            rows.setdefault(key, {"prefs": d["preferences"]})[model] = d["probs"]
    keep = [r for r in rows.values() if all(m in r for m in MODELS)]
    label = np.array([int(Counter(r["prefs"].values()).most_common(1)[0][0]) - 1 for r in keep])
    conf = {m: np.array([max(r[m]) for r in keep]) for m in MODELS}
    verdict = {m: np.array([int(np.argmax(r[m])) for r in keep]) for m in MODELS}
    return conf, verdict, label


def _ours(conf, agrees, agreement):
    split = GRID if GRID in ("pooled", "either") else "bonferroni"
    grid = "relay" if split != "bonferroni" else GRID
    found = certify_cascade(
        conf,
        agrees,
        agreement=agreement,
        delta=DELTA,
        grid=grid,
        split=split,  # type: ignore[arg-type]
    )
    return [r.threshold for r in found.rungs]


def evaluate(conf, verdict, label, models, agreement, splits, seed):
    rng = np.random.default_rng(seed)
    n = len(label)
    out = {
        m: {"coverage": [], "agreement": [], "below": 0} for m in ("published", "honoured", "late")
    }
    for _ in range(splits):
        order = rng.permutation(n)
        cal, test = order[: n // 2], order[n // 2 :]
        c_cal = [conf[m][cal] for m in models]
        a_cal = [verdict[m][cal] == label[cal] for m in models]
        found = {
            "published": published_thresholds(c_cal, a_cal, agreement, DELTA),
            "honoured": published_thresholds(c_cal, a_cal, agreement, DELTA, honour_test=True),
            "late": _ours(c_cal, a_cal, agreement),
        }
        for method, thresholds in found.items():
            by = decide([conf[m][test] for m in models], thresholds)
            decided = by >= 0
            out[method]["coverage"].append(decided.mean())
            if decided.any():
                right = [
                    verdict[models[j]][i] == label[i]
                    for i, j in zip(test, by, strict=True)
                    if j >= 0
                ]
                share = float(np.mean(right))
                out[method]["agreement"].append(share)
                out[method]["below"] += share < agreement
    return out


def bounds(conf, verdict, label, splits: int, seed: int) -> int:
    """Two ceilings no valid test reaches, against the published code, for each judge
    alone: (a) one fixed sequence at the whole delta from the start (a decided count)
    that does best on average, chosen after seeing all the labels; (b) per split, the
    lowest point whose exact bound at delta passes (with 30 cases or more): what a test
    could decide if it knew in advance where to look, i.e. no multiplicity at all."""
    print("| judge | A | published | (a) best start in hindsight | (b) best point per split "
          "| (b) / published |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    n = len(label)
    for model in ("gpt-4-turbo", "gpt-3.5-turbo"):
        for agreement in (0.8, 0.85, 0.9):
            rng = np.random.default_rng(seed)
            starts = range(30, n // 2, 5)
            fixed = {s: 0.0 for s in starts}
            best = pub = 0.0
            for _ in range(splits):
                order = rng.permutation(n)
                cal, test = order[: n // 2], order[n // 2 :]
                c, a = conf[model][cal], verdict[model][cal] == label[cal]
                curve = rung_threshold(c, a, agreement=agreement, delta=DELTA).curve
                ok = (curve.upper(DELTA) <= 1 - agreement) & (curve.decided >= 30)
                if ok.any():
                    best += np.mean(conf[model][test] >= curve.thresholds[ok].min())
                for s in starts:
                    t = rung_threshold(
                        c, a, agreement=agreement, delta=DELTA, grid="every", min_decided=s
                    ).threshold
                    fixed[s] += 0.0 if t is None else np.mean(conf[model][test] >= t)
                t_pub = published_thresholds([c], [a], agreement, DELTA)[0]
                pub += np.mean(conf[model][test] >= t_pub)
            top = max(fixed.values()) / splits
            print(f"| {model} | {agreement} | {pub / splits:.3f} | {top:.3f} | "
                  f"{best / splits:.3f} | {best / pub:.2f} |", flush=True)  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path, help="a clone of cascaded-selective-evaluation")
    p.add_argument("--splits", type=int, default=200)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument(
        "--grid",
        choices=("late", "every", "two", "relay", "pooled", "either"),
        help="ours: a grid (per rung, Bonferroni) or pooled / either (the default: relay grid)",
    )
    p.add_argument(
        "--start-factor",
        type=int,
        help="an experiment: `late` starts at min(F·c, reached // 3) instead of 2c "
        "(F = 100: a third of the cases reaching the rung)",
    )
    p.add_argument("--step", type=float, help="an experiment: candidates at counts start*step^k")
    p.add_argument("--held-out", action="store_true", help="the cascades not tuned on")
    p.add_argument(
        "--bounds",
        action="store_true",
        help="for one judge: what a single fixed-sequence test could reach with its start "
        "chosen after seeing every label, and the lowest point passing at delta per split",
    )
    args = p.parse_args(argv)

    if args.step:
        import calibration.certify.threshold as threshold

        threshold.STEP = args.step
    if args.grid:
        global GRID
        GRID = args.grid
    if args.start_factor is not None:
        import calibration.certify.threshold as threshold

        threshold.START_FACTOR = args.start_factor
    conf, verdict, label = load(args.folder)
    print(f"{len(label)} pairs judged by all three models")
    if args.bounds:
        return bounds(conf, verdict, label, args.splits, args.seed)
    print(
        "| cascade | A | coverage: published | published, its test honoured | ours "
        "| ours / published | ours / honoured "
        "| agreement on decided: published | ours | splits below A: published | ours |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, models in (HELD_OUT if args.held_out else CASCADES).items():
        for agreement in (0.8, 0.85, 0.9):
            r = evaluate(conf, verdict, label, models, agreement, args.splits, args.seed)
            cov = {m: float(np.mean(r[m]["coverage"])) for m in r}
            agr = {m: float(np.mean(r[m]["agreement"])) if r[m]["agreement"] else None for m in r}
            ratio = cov["late"] / cov["published"] if cov["published"] else float("nan")
            honoured = cov["late"] / cov["honoured"] if cov["honoured"] else float("nan")
            fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
            print(
                f"| {name} | {agreement} | {cov['published']:.3f} | {cov['honoured']:.3f} | "
                f"{cov['late']:.3f} | {ratio:.2f} | {honoured:.2f} | "
                f"{fmt(agr['published'])} | {fmt(agr['late'])} | "
                f"{r['published']['below'] / args.splits:.3f} | "
                f"{r['late']['below'] / args.splits:.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
