"""Three simulated jurors on the loopback test server, for the jury example of docs/guides/juries.md.

    python examples/jury/simulated_jurors.py OUT_DIR [--independent] [--cases 200]

writes OUT_DIR/cases.jsonl and OUT_DIR/human_labels.csv (the planted true labels), starts
three planted jurors (judge.testing.jurors) on 127.0.0.1:8101, 8102 and 8103, as
examples/jury/jury.yaml names them, and serves until Ctrl-C. By default jurors a and b
share their errors (20% and 25%) and c errs independently (15%) and answers text that is
not JSON on 10% of cases; `--independent` gives all three 15% of independent errors.
"""

from __future__ import annotations

import argparse
import csv
import threading
from pathlib import Path

from judge.testing import FakeOpenAIServer
from judge.testing.jurors import POLICY_LABELS, plant_panel, planted_truth, write_cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--independent", action="store_true")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    truth = planted_truth(args.cases, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    write_cases(args.out / "cases.jsonl", truth)
    with (args.out / "human_labels.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "label"])
        writer.writerows(truth.items())
    if args.independent:
        rates, shared = [0.15, 0.15, 0.15], []
    else:
        rates, shared = [0.2, 0.25, 0.15], [0, 1]
    jurors = plant_panel(
        truth,
        POLICY_LABELS,
        error_rates=rates,
        shared=shared,
        malformed_rate=[0, 0, 0.1],
        seed=args.seed,
    )
    servers = [
        FakeOpenAIServer(responder=juror, model=f"juror-{name}-2024-01-01", port=port).start()
        for name, juror, port in zip("abc", jurors, (8101, 8102, 8103), strict=True)
    ]
    print(f"jurors on {', '.join(s.base_url for s in servers)}; Ctrl-C to stop", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        for server in servers:
            server.stop()


if __name__ == "__main__":
    main()
