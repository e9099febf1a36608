"""Write irrcac-figures.json: irrCAC's agreement coefficients on the cross-check sets.

irrCAC pins scipy==1.12.0 (and so numpy<1.29), which the project's environment does not
use, so its figures are recorded here rather than computed in the tests. To regenerate,
outside the project's environment or beside it with the pins skipped:

    pip install --no-deps --target /tmp/irrcac irrCAC==0.4.4 pandas pytz
    PYTHONPATH=.:/tmp/irrcac python tests/data/calibration/irrcac_figures.py

It grades examples/cases.jsonl with the offline rules judge, as the tests do, and records
each set's confusion matrix with the figures, so the tests compare like with like even if
the rules judge later changes.
"""

from __future__ import annotations

import json
import tempfile
from importlib.metadata import version
from pathlib import Path

import pandas as pd
from irrCAC.raw import CAC

from tests.calibration_sets import (
    DATA,
    EXAMPLES,
    faithbench,
    grade_examples_offline,
    hanna_ratings,
    llmbar,
    read_csv_labels,
)

DIGITS = 15


def _graded_labels(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row["status"] in ("ok", "abstained"):
            out[row["id"]] = row["label"] if row["status"] == "ok" else "abstained"
    return out


def _two_raters(human: dict[str, str], judge: dict[str, str]) -> dict:
    ids = [i for i in human if i in judge]
    frame = pd.DataFrame({"human": [human[i] for i in ids], "judge": [judge[i] for i in ids]})
    cac = CAC(frame, digits=DIGITS)
    order = sorted(set(frame["human"]) | set(frame["judge"]))
    matrix = [[int(((frame.human == h) & (frame.judge == j)).sum()) for j in order] for h in order]
    return {
        "n": len(ids),
        "labels": order,
        "confusion": matrix,
        "gwet_ac1": float(cac.gwet()["est"]["coefficient_value"]),
        "fleiss_kappa": float(cac.fleiss()["est"]["coefficient_value"]),
        "krippendorff_alpha": float(cac.krippendorff()["est"]["coefficient_value"]),
    }


def _hanna() -> dict:
    long = pd.read_csv(DATA / "hanna-relevance" / "humans_long.csv")
    wide = long.pivot(index="id", columns="annotator", values="label")
    cac = CAC(wide, digits=DIGITS)
    return {
        "n": int(len(wide)),
        "gwet_ac1": float(cac.gwet()["est"]["coefficient_value"]),
        "fleiss_kappa": float(cac.fleiss()["est"]["coefficient_value"]),
        "krippendorff_alpha": float(cac.krippendorff()["est"]["coefficient_value"]),
    }


def _fleiss_weighted(*, named: bool) -> dict:
    """Fleiss' kappa (Gwet's generalisation: any number of ratings an item) unweighted,
    linear and quadratic, on the 1-5 scale, of HANNA's ratings, all or named-annotator."""
    long = pd.DataFrame(hanna_ratings(named=named), columns=["id", "annotator", "label"])
    wide = long.pivot(index="id", columns="annotator", values="label")
    out: dict = {"n": int(len(wide)), "ratings": int(len(long))}
    for weights in ("identity", "linear", "quadratic"):
        cac = CAC(wide, weights=weights, categories=[1, 2, 3, 4, 5], digits=DIGITS)
        out[f"fleiss_kappa_{weights}"] = float(cac.fleiss()["est"]["coefficient_value"])
    return out


def main() -> None:
    fb, lb = faithbench(), llmbar()
    with tempfile.TemporaryDirectory() as tmp:
        records = grade_examples_offline(Path(tmp) / "faithfulness.jsonl")
        examples = _two_raters(
            read_csv_labels(EXAMPLES / "human_labels.csv"), _graded_labels(records)
        )
    figures = {
        "source": f"irrCAC {version('irrCAC')}, CAC(ratings, digits={DIGITS}); nominal",
        "faithbench-gpt4o": _two_raters(
            read_csv_labels(fb.human_file), read_csv_labels(fb.judge_file)
        ),
        "llmbar-natural-gpt4": _two_raters(
            read_csv_labels(lb.human_file), read_csv_labels(lb.judge_file)
        ),
        "examples-rules-faithfulness": examples,
        "hanna-relevance-3-raters": _hanna(),
        "hanna-relevance-fleiss-weighted": _fleiss_weighted(named=False),
        "hanna-relevance-named-annotators": _fleiss_weighted(named=True),
    }
    out = Path(__file__).with_name("irrcac-figures.json")
    out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
