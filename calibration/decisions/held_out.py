"""The ``split`` section of a result: dev and test side by side, readiness on test."""

from __future__ import annotations

from typing import Any

from calibration.decisions.figures import gate_metrics
from calibration.decisions.readiness import assess_readiness
from calibration.pairs.split import Split

__all__ = ["held_out_section"]

# The figures shown side by side (all are in ``side_by_side``).
SHOWN = (
    "n",
    "observed_agreement",
    "kappa",
    "kappa_ci95_low",
    "kappa_ci95_high",
    "weighted_kappa",
    "ac1",
    "balanced_accuracy",
    "tpr",
    "tnr",
    "pearson",
    "spearman",
    "mae",
)


def held_out_section(
    split: Split, ids: list[str], dev: dict[str, Any], result: dict[str, Any]
) -> dict[str, Any]:
    """The ``split`` section for a result whose top level is the test split's; adds to the
    result's readiness reasons that it was judged on the test split."""
    dev = dict(dev)
    dev["disagreement_ids"] = [d["id"] for d in dev.pop("disagreements")]
    dev["readiness"], dev["readiness_reasons"] = assess_readiness(dev)
    fitted = ""
    if (result.get("threshold") or {}).get("fitted"):
        fitted = " (the threshold was fitted on dev only)"
        dev["readiness_reasons"].append("the threshold was fitted on these dev labels (in-sample)")
    result["readiness_reasons"].insert(
        0,
        f"judged on the held-out test split: {split.describe()}{fitted}; "
        f"dev readiness {dev['readiness']}",
    )
    return {
        "test_fraction": split.test_fraction,
        "seed": split.seed,
        "stratified": split.stratified,
        "n_dev": len(split.dev),
        "n_test": len(split.test),
        "dev_ids": [ids[i] for i in split.dev],
        "test_ids": [ids[i] for i in split.test],
        "readiness_on": "test",
        "dev": dev,
        "side_by_side": {"dev": gate_metrics(dev), "test": gate_metrics(result)},
        "shown": list(SHOWN),
    }
