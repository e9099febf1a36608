"""A panel of three judges against each of them alone: requests, tokens, cost, agreement.

    python benchmarks/jury.py [--cases 400] [--seed 7] [--write]

Three simulated jurors (judge.testing.jurors) on the loopback test server, one server
each, grade seeded cases of the `policy` labels rubric (examples/rubrics) with planted
true labels, in two plantings: `correlated` (a and b share their errors, 20% and 25%; c
errs on 15% of other cases) and `independent` (15% each, on different cases); in both, c
answers text that is not JSON on 10% of cases. Reported per juror and for the panel:
requests the servers answered, tokens and cost per case (at an assumed price of $2.50 /
$10 per million prompt / completion tokens for every juror), and Cohen's kappa with the
planted labels (95% bootstrap interval; a case a member could not decide counts as a
disagreement), with the panel-vs-best-juror verdict of `judge.jury.humans`. Then the
cheaper panels on the independent planting, with juror a priced as a small model ($0.15 /
$0.60) and b and c as above: `full` (every juror every case), `cyclic` (one juror a case,
all three on a 10% overlap) and `escalate` (a first; b and c where a fails or says
`minor_issue`), each with its requests per case by juror, its cost (from the summary's
`jury.cost`) and its kappa with the planted labels over every case (scikit-learn's). `--write`
writes benchmarks/jury.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from sklearn.metrics import cohen_kappa_score

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from judge.jury import grade_file_with_jury, load_jury  # noqa: E402
from judge.testing import FakeOpenAIServer  # noqa: E402
from judge.testing.jurors import plant_panel, planted_truth  # noqa: E402
from judge.testing.jurors import write_cases as jurors_cases  # noqa: E402

LABELS = ["compliant", "minor_issue", "violation"]
PRICE = (2.50, 10.0)  # USD per million prompt / completion tokens (assumed, every juror)
PLANTINGS = {
    "correlated": dict(error_rates=[0.2, 0.25, 0.15], shared=[0, 1]),
    "independent": dict(error_rates=[0.15, 0.15, 0.15], shared=[]),
}


def write_cases(folder: Path, n: int, seed: int) -> tuple[Path, dict[str, str]]:
    truth = planted_truth(n, seed=seed)
    return jurors_cases(folder / "cases.jsonl", truth), truth


def run_planting(name: str, n: int, seed: int, folder: Path) -> dict[str, Any]:
    cases, truth = write_cases(folder, n, seed)
    jurors = plant_panel(truth, LABELS, malformed_rate=[0, 0, 0.1], seed=seed, **PLANTINGS[name])  # type: ignore[arg-type]
    servers = {
        juror_name: FakeOpenAIServer(responder=j, model=f"juror-{juror_name}-2024-01-01").start()
        for juror_name, j in zip("abc", jurors, strict=True)
    }
    try:
        spec = {
            "jurors": [
                {"name": k, "model": s.model, "base_url": s.base_url, "concurrency": 16}
                for k, s in servers.items()
            ]
        }
        jury_file = folder / f"{name}.yaml"
        jury_file.write_text(yaml.safe_dump(spec), "utf-8")
        started = time.perf_counter()
        summary = grade_file_with_jury(
            load_jury(jury_file),
            cases,
            folder / name,
            "policy",
            rubrics_dir=REPO / "examples" / "rubrics",
            env={},
            use_cache=False,
            human_labels=[{"id": i, "label": t} for i, t in truth.items()],
            prices=PRICE,
        )
        seconds = time.perf_counter() - started
        requests = {k: s.stats.requests for k, s in servers.items()}
    finally:
        for server in servers.values():
            server.stop()
    return {"summary": summary, "requests": requests, "seconds": seconds, "cases": n}


CHEAP = (0.15, 0.60)  # juror a in the modes table: a small model's price (assumed)
MODES: dict[str, dict[str, Any]] = {
    "full": {},
    "cyclic": {"mode": "cyclic", "overlap": 0.1},
    "escalate": {"mode": "escalate", "escalate": {"labels": ["minor_issue"]}},
}


def run_modes(n: int, seed: int, folder: Path) -> list[str]:
    """The modes table's rows (the module doc), one planting, one server per juror."""
    cases, truth = write_cases(folder, n, seed)
    jurors = plant_panel(
        truth, LABELS, malformed_rate=[0, 0, 0.1], seed=seed, **PLANTINGS["independent"]
    )
    servers = {
        k: FakeOpenAIServer(responder=j, model=f"juror-{k}-2024-01-01").start()
        for k, j in zip("abc", jurors, strict=True)
    }
    out = []
    try:
        for mode, rules in MODES.items():
            spec = [
                {"name": k, "model": s.model, "base_url": s.base_url, "concurrency": 16}
                for k, s in servers.items()
            ]
            price = {"input": CHEAP[0], "output": CHEAP[1]}
            spec[0]["price"] = price
            jury_file = folder / f"{mode}.yaml"
            jury_file.write_text(yaml.safe_dump({"jurors": spec, **rules}), "utf-8")
            for server in servers.values():
                server.reset_stats()
            summary = grade_file_with_jury(
                load_jury(jury_file),
                cases,
                folder / mode,
                "policy",
                rubrics_dir=REPO / "examples" / "rubrics",
                env={},
                use_cache=False,
                prices=PRICE,
                n_boot=200,
            )
            records = [json.loads(line) for line in (folder / mode / "policy.jsonl").open()]
            given = [r["label"] if r["status"] == "ok" else "(none)" for r in records]
            kappa = cohen_kappa_score([truth[r["id"]] for r in records], given)
            cost = summary["jury"]["cost"]
            per_juror = ", ".join(f"{k} {s.stats.requests / n:.2f}" for k, s in servers.items())
            agreement = summary["jury"]["agreement"]
            out.append(
                f"| {mode} | {cost['requests_per_case']:.2f} ({per_juror}) | "
                f"${cost['per_case_usd'] * 1000:.3f} | {kappa:.3f} | "
                f"{agreement['cases']} cases: alpha {agreement['krippendorff_alpha']:.3f} |"
            )
    finally:
        for server in servers.values():
            server.stop()
    return out


def rows(name: str, result: dict[str, Any]) -> list[str]:
    jury, n = result["summary"]["jury"], result["cases"]
    vs = jury["vs_humans"]
    out = []
    for member, figures in vs["members"].items():
        if member == "panel":
            tokens = result["summary"]["tokens"]
            requests = sum(result["requests"].values())
        else:
            tokens = jury["jurors"][member]["tokens"]
            requests = result["requests"][member]
        cost = (tokens["prompt"] * PRICE[0] + tokens["completion"] * PRICE[1]) / 1e6 / n
        ci = figures["kappa_ci95"]
        out.append(
            f"| {name} | {member} | {requests / n:.2f} | {tokens['prompt'] / n:.0f} + "
            f"{tokens['completion'] / n:.0f} | ${cost * 1000:.3f} | {figures['kappa']:.3f} "
            f"[{ci[0]:.3f}, {ci[1]:.3f}] | {figures['coverage']:.3f} |"
        )
    versus = vs["panel_vs_best"]
    dlo, dhi = versus["kappa_difference_ci95"]
    out.append(
        f"| {name} | panel vs best ({vs['best_juror']}) | | | x{vs['cost_ratio']:.2f} | "
        f"{versus['kappa_difference']:+.3f} [{dlo:.3f}, {dhi:.3f}], McNemar p "
        f"{versus['mcnemar']['p_value']:.3g}: **{versus['verdict']}** | errors' r "
        f"{vs['error_correlation']['mean']:+.3f}, n_eff {vs['error_correlation']['n_eff']:.2f} |"
    )
    learned = vs["learned_weights"]
    k = learned["kappa_on_test"]
    verdicts = (learned["learned_vs_vote"]["verdict"], learned["learned_vs_best"]["verdict"])
    out.append(
        f"| {name} | learned weights (Dawid-Skene, dev {learned['dev']}, test "
        f"{learned['test']}) | | | | test kappa {k['learned']:.3f} (vote {k['vote']:.3f}, best "
        f"juror {k[learned['best_juror_on_test']]:.3f}): vs vote **{verdicts[0]}**, vs best "
        f"**{verdicts[1]}** | |"
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = [
        "| planting | member | requests / case | tokens / case (prompt + completion) | "
        "cost / 1000 cases | kappa with planted labels [95%] | coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name in PLANTINGS:
            folder = Path(tmp) / name
            folder.mkdir()
            lines += rows(name, run_planting(name, args.cases, args.seed, folder))
        folder = Path(tmp) / "modes"
        folder.mkdir()
        modes = run_modes(args.cases, args.seed, folder)
    command = f"python benchmarks/jury.py --cases {args.cases} --seed {args.seed}"
    cheaper = [
        "",
        "## Cheaper panels (independent planting; juror a priced $0.15 / $0.60, b and c "
        "$2.50 / $10 per million tokens)",
        "",
        "| mode | requests / case (server requests by juror, repairs included) | "
        "cost / 1000 cases | kappa with planted labels (every case) | agreement measured on |",
        "|---|---|---|---|---|",
        *modes,
    ]
    text = "\n".join(
        [f"# A jury against its jurors\n\nCommand: `{command}`\n", *lines, *cheaper, ""]
    )
    print(text)
    if args.write:
        (REPO / "benchmarks" / "jury.md").write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
