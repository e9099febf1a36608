"""Validity of `judge drift`'s alarm: false alarms on streams with no drift, and how soon a
drop of 0.2 in kappa is caught.

    nice -n 10 python benchmarks/drift.py [--streams 500] [--null-streams N] [--seed 44] [--write]
    nice -n 10 python benchmarks/drift.py --null-check|--power-check [--kappa K ...]
        [--reference file|first|past] --streams N
    nice -n 10 python benchmarks/drift.py --threshold-check --kappa K --streams N

Each stream: 10 windows of 100 labelled cases (two classes), drawn from the 2x2 table with
the setting's kappa and pass rate (people and judge alike:
`calibration.agreement.kappa_variance.cell_probabilities`). With drift, windows 6-10 (after
the midpoint) are drawn at kappa - 0.2. The reference is either a release calibration of
500 labels from the undrifted table (`--reference FILE`), the stream's first window
(`--reference first`, the default of the command) or, for each window, all the windows
before it (`--reference past`). Every stream goes through
`calibration.drift.drift_alarm`, the function `judge drift` calls, at alpha = 0.05 with its
default 4,000 simulated null streams (seeded per stream; each from a table drawn from the pooled table's Dirichlet posterior).

Reported per setting: the share of no-drift streams with any alarm (the false-alarm rate
over the stream, to be at most alpha), and of drifted streams the share whose first alarm
is window 6 or 7 (within two windows of the change; an earlier alarm counts as a miss),
with Wilson intervals. `--write` writes the table into benchmarks/drift.md and keeps the
page's text from its NOTES marker on, written by hand from the checks' printed figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from calibration.agreement.kappa_variance import cell_probabilities  # noqa: E402
from calibration.drift import drift_alarm, span_scan  # noqa: E402
from calibration.inference.intervals import wilson_interval  # noqa: E402

WINDOWS, SIZE, CHANGE, DROP, RELEASE = 10, 100, 5, 0.2, 500
ALPHA = 0.05
NOTES = "<!-- notes: kept by --write -->"
# (kappa before the drop, pass rate, reference): the reference is "file" (a release
# calibration of RELEASE labels), "first" (the stream's first window) or "past" (each
# window against all the windows before it)
SETTINGS = [
    (0.8, 0.5, "file"),
    (0.9, 0.5, "file"),
    (0.7, 0.5, "file"),
    (0.8, 0.75, "file"),
    (0.8, 0.5, "first"),
    (0.7, 0.5, "first"),
    (0.8, 0.5, "past"),
    (0.7, 0.5, "past"),
]


def one_stream(rng, kappa: float, rate: float, reference: str, drift: bool) -> int | None:
    """The 0-based window of the stream's first alarm, or None."""
    before = cell_probabilities(kappa, rate, rate).ravel()
    after = cell_probabilities(kappa - DROP, rate, rate).ravel()
    tables = [
        rng.multinomial(SIZE, after if drift and w >= CHANGE else before).reshape(2, 2)
        for w in range(WINDOWS)
    ]
    if reference == "file":
        ref, tested, offset = rng.multinomial(RELEASE, before).reshape(2, 2), tables, 0
    else:
        ref, tested, offset = tables[0], tables[1:], 1
    seed = int(rng.integers(2**31))
    past = reference == "past"
    alarm = drift_alarm(ref, tested, 1 - np.eye(2), alpha=ALPHA, past=past, seed=seed)
    return alarm.alarms.index(True) + offset if any(alarm.alarms) else None


def setting_row(
    rng, streams: int, null_streams: int, kappa: float, rate: float, reference: str
) -> dict:
    null = [one_stream(rng, kappa, rate, reference, False) for _ in range(null_streams)]
    drifted = [one_stream(rng, kappa, rate, reference, True) for _ in range(streams)]
    false_alarms = sum(a is not None for a in null)
    caught = sum(a is not None and CHANGE <= a <= CHANGE + 1 for a in drifted)
    ever = sum(a is not None and a >= CHANGE for a in drifted)
    return {
        "kappa": kappa,
        "rate": rate,
        "reference": reference,
        "false_alarm": (false_alarms / null_streams, wilson_interval(false_alarms, null_streams)),
        "within_two": (caught / streams, wilson_interval(caught, streams)),
        "ever": ever / streams,
    }


def check(streams: int, seed: int, kappas: list[float], drift: bool, reference: str) -> None:
    """More streams of one kind, for a tighter rate than the table's: without drift, the
    share with any alarm; with drift, the share whose first alarm is window 6 or 7. Pass
    rate 0.5."""
    rng = np.random.default_rng(seed)
    for kappa in kappas:
        firsts = [one_stream(rng, kappa, 0.5, reference, drift) for _ in range(streams)]
        if drift:
            hits = sum(a is not None and CHANGE <= a <= CHANGE + 1 for a in firsts)
            what = "caught within two windows"
        else:
            hits, what = sum(a is not None for a in firsts), "alarmed"
        low, high = wilson_interval(hits, streams)
        print(
            f"kappa {kappa}: {hits} of {streams} {what}, {hits / streams:.4f} [{low:.3f}, {high:.3f}]"
        )


def _true_null(rng, kappa: float, size: int) -> np.ndarray:
    """The largest scan of ``size`` streams without drift drawn from the true table."""
    p = np.broadcast_to(cell_probabilities(kappa, 0.5, 0.5).ravel(), (size, 4))
    ref = rng.multinomial(RELEASE, p).reshape(size, 2, 2)
    wins = np.stack([rng.multinomial(SIZE, p) for _ in range(WINDOWS)], axis=1)
    return span_scan(ref, wins.reshape(size, WINDOWS, 2, 2), 1 - np.eye(2)).max(axis=-1)


def threshold_check(streams: int, seed: int, kappa: float) -> None:
    """Each null stream's simulated threshold beside the one from its true table (kappa,
    release reference, pass rate 0.5), and the share of drifted streams that a test that
    knew the change would catch: windows 6 and 7 pooled against the reference, at the true
    threshold."""
    rng = np.random.default_rng(seed)
    true = float(
        np.quantile(np.concatenate([_true_null(rng, kappa, 20_000) for _ in range(10)]), 1 - ALPHA)
    )
    before = cell_probabilities(kappa, 0.5, 0.5).ravel()
    largest, simulated = [], []
    for _ in range(streams):
        ref = rng.multinomial(RELEASE, before).reshape(2, 2)
        wins = [rng.multinomial(SIZE, before).reshape(2, 2) for _ in range(WINDOWS)]
        alarm = drift_alarm(ref, wins, 1 - np.eye(2), alpha=ALPHA, seed=int(rng.integers(2**31)))
        largest.append(max(alarm.scan))
        simulated.append(alarm.threshold)
    top, h = np.array(largest), np.array(simulated)
    print(
        f"threshold from the true table {true:.3f}; simulated per stream: mean {h.mean():.3f}, "
        f"sd {h.std():.3f}; alarms {np.mean(top > h):.4f} simulated, {np.mean(top > true):.4f} true"
    )
    after = np.broadcast_to(cell_probabilities(kappa - DROP, 0.5, 0.5).ravel(), (200_000, 4))
    refs = rng.multinomial(RELEASE, np.broadcast_to(before, (200_000, 4))).reshape(-1, 2, 2)
    pooled = rng.multinomial(2 * SIZE, after).reshape(-1, 1, 2, 2)
    knew = span_scan(refs, pooled, 1 - np.eye(2))[:, 0]
    print(
        f"knowing the change: windows 6-7 pooled pass the true threshold in {np.mean(knew > true):.3f}"
    )


def _cell(pair) -> str:
    share, (low, high) = pair
    return f"{share:.3f} [{low:.3f}, {high:.3f}]"


def markdown(rows: list[dict], streams: int, null_streams: int, seed: int, seconds: float) -> str:
    lines = [
        "# `judge drift`: false alarms and time to detect a drop",
        "",
        f"`nice -n 10 python benchmarks/drift.py --streams {streams} --null-streams "
        f"{null_streams} --seed {seed} --write` "
        f"({seconds:.0f} s). {WINDOWS} windows of {SIZE} labels, two classes; drift: kappa "
        f"- {DROP} from window {CHANGE + 1}; alarm: `calibration.drift.drift_alarm` "
        f"(scan of spans of up to 2 windows, threshold from 4,000 simulated null streams), alpha = {ALPHA}. "
        f"Reference `file`: a release calibration of {RELEASE} labels; `first`: the stream's "
        "first window; `past`: all the windows before each. "
        f"Shares over {null_streams} streams without drift and {streams} with, "
        "with Wilson 95% intervals.",
        "",
        f"| kappa | pass rate | reference | no drift: any alarm (bar: <= {ALPHA}) "
        "| drift: first alarm at window 6 or 7 (bar: >= 0.80) | drift: any alarm from window 6 |",
        "|---:|---:|---|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kappa']} | {r['rate']} | {r['reference']} | {_cell(r['false_alarm'])} "
            f"| {_cell(r['within_two'])} | {r['ever']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=500, help="drifted streams a setting")
    parser.add_argument("--null-streams", type=int, help="streams without drift (--streams)")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--null-check", action="store_true", help="only streams without drift")
    parser.add_argument("--power-check", action="store_true", help="only streams with drift")
    parser.add_argument("--kappa", type=float, nargs="+", default=[0.9, 0.8], help="of a check")
    parser.add_argument("--threshold-check", action="store_true", help="only threshold_check")
    parser.add_argument("--reference", choices=["file", "first", "past"], default="file",
                        help="of a null or power check")  # fmt: skip
    args = parser.parse_args()
    if args.threshold_check:
        threshold_check(args.streams, args.seed, args.kappa[-1])
        return
    if args.null_check or args.power_check:
        check(args.streams, args.seed, args.kappa, args.power_check, args.reference)
        return
    rng = np.random.default_rng(args.seed)
    null_streams = args.null_streams or args.streams
    started = time.perf_counter()
    rows = []
    for kappa, rate, reference in SETTINGS:
        rows.append(setting_row(rng, args.streams, null_streams, kappa, rate, reference))
        print(rows[-1], flush=True)
    text = markdown(rows, args.streams, null_streams, args.seed, time.perf_counter() - started)
    print(text)
    if args.write:
        page = REPO / "benchmarks" / "drift.md"
        old = page.read_text(encoding="utf-8") if page.exists() else ""
        notes = old[old.index(NOTES) :] if NOTES in old else NOTES + "\n"
        page.write_text(text + "\n" + notes, encoding="utf-8")


if __name__ == "__main__":
    main()
