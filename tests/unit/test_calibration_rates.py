"""The corrected pass rate: judge rate over all judged cases, error rates from the labelled.

Cross-checked against truescore's ``rogan_gladen_estimate`` (same estimator, a delta-method
interval) on FaithBench GPT-4o, LLMBar Natural GPT-4 and the examples with the rules
judge, and a seeded coverage simulation over labelled subsets (issue 15 item 1).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from truescore.correct import rogan_gladen_estimate

from calibration import calibrate, rogan_gladen, rogan_gladen_interval, wilson_interval
from calibration.estimates.rates import corrected_pass_rate
from tests.calibration_sets import (
    LabelledSet,
    examples,
    faithbench,
    grade_examples_offline,
    llmbar,
    read_csv_labels,
)

FAST = {"n_bootstrap": 50, "seed": 0}
SPLITS = 200
# Labelled subset sizes of issue 15: 150 of 750, 30 of 100, 18 of 37.
SUBSETS = {"faithbench": 150, "llmbar": 30, "examples": 18}


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, LabelledSet]:
    records = grade_examples_offline(tmp_path_factory.mktemp("rules") / "faithfulness.jsonl")
    found = [faithbench(), llmbar(), examples(records)]
    assert [len(s.ids) for s in found] == [750, 100, 37]
    return {s.name: s for s in found}


def ours(labelled: LabelledSet, subset: np.ndarray):
    """Our corrected rate from counts: judge over every case, Se/Sp from ``subset``."""
    j, h = labelled.judge[subset], labelled.human[subset]
    return corrected_pass_rate(
        int(labelled.judge.sum()),
        len(labelled.judge),
        tp=int(((h == 1) & (j == 1)).sum()),
        fn=int(((h == 1) & (j == 0)).sum()),
        tn=int(((h == 0) & (j == 0)).sum()),
        fp=int(((h == 0) & (j == 1)).sum()),
    )


def write_subset(path: Path, source: Path, keep: set[str]) -> Path:
    with source.open(encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["id"] in keep]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_judge_only_cases_move_the_corrected_rate_off_the_human_rate(tmp_path):
    # 10 labelled (5 pass, 5 fail; the judge passes 4 of the passes and 1 of the fails)
    # and 10 judge-only cases the judge all passes: apparent rate (5 + 10) / 20 = 0.75,
    # Se 0.8, Sp 0.8, so the true rate is (0.75 + 0.8 - 1) / 0.6 = 0.9167.
    human = ["pass"] * 5 + ["fail"] * 5
    judge = ["pass"] * 4 + ["fail"] + ["pass"] + ["fail"] * 4
    (tmp_path / "h.csv").write_text(
        "id,label\n" + "".join(f"c{i},{v}\n" for i, v in enumerate(human))
    )
    (tmp_path / "j.csv").write_text(
        "id,label\n"
        + "".join(f"c{i},{v}\n" for i, v in enumerate(judge))
        + "".join(f"x{i},pass\n" for i in range(10))
    )
    b = calibrate(tmp_path / "j.csv", tmp_path / "h.csv", **FAST)["binary"]
    assert b["human_pass_rate"] == 0.5
    assert b["judged"] == {
        "n": 20,
        "passed": 15,
        "unlabelled": 10,
        "pass_rate": 0.75,
        "pass_rate_ci95": wilson_interval(15, 20),
    }
    assert b["corrected_pass_rate"] == pytest.approx((0.75 + 0.8 - 1) / 0.6)
    lo, hi = b["corrected_pass_rate_ci95"]
    assert lo < b["corrected_pass_rate"] < hi


def test_with_every_case_labelled_the_interval_is_wilsons_on_the_human_rate(sets):
    fb = sets["faithbench"]
    r = calibrate(fb.judge_file, fb.human_file, **FAST)["binary"]
    assert r["judged"]["unlabelled"] == 0
    assert r["corrected_pass_rate"] == pytest.approx(249 / 750, abs=1e-12)
    assert r["corrected_pass_rate_ci95"] == pytest.approx(wilson_interval(249, 750), abs=1e-12)


@pytest.mark.parametrize("name", ["faithbench", "llmbar", "examples"])
def test_point_equals_truescore_on_the_full_sets(sets, name, tmp_path):
    labelled = sets[name]
    everyone = np.arange(len(labelled.ids))
    theirs = rogan_gladen_estimate(labelled.judge, labelled.human, everyone)
    r = calibrate(labelled.judge_file, labelled.human_file, **FAST)["binary"]
    assert r["corrected_pass_rate"] == pytest.approx(theirs.point, abs=1e-12)
    assert r["corrected_pass_rate"] == pytest.approx(labelled.human.mean(), abs=1e-12)


@pytest.mark.parametrize("name", ["faithbench", "llmbar", "examples"])
def test_point_equals_truescore_with_judge_only_cases_end_to_end(sets, name, tmp_path):
    labelled = sets[name]
    rng = np.random.default_rng(11)
    subset = np.sort(rng.choice(len(labelled.ids), SUBSETS[name], replace=False))
    # Rows people marked abstained stay: they say those cases are not pass/fail cases.
    not_pass_fail = set(read_csv_labels(labelled.human_file)) - set(labelled.ids)
    keep = {labelled.ids[i] for i in subset} | not_pass_fail
    human = write_subset(tmp_path / "human.csv", labelled.human_file, keep)
    r = calibrate(labelled.judge_file, human, **FAST)["binary"]
    theirs = rogan_gladen_estimate(labelled.judge, labelled.human[subset], subset)
    assert r["judged"]["n"] == len(labelled.ids)
    assert r["corrected_pass_rate"] == pytest.approx(theirs.point, abs=1e-12)
    assert r["corrected_pass_rate"] != pytest.approx(r["human_pass_rate"], abs=1e-6)


@pytest.mark.parametrize("name", ["faithbench", "llmbar", "examples"])
def test_interval_covers_the_full_data_human_rate_over_seeded_splits(sets, name):
    labelled = sets[name]
    truth = labelled.human.mean()
    rng = np.random.default_rng(2024)
    covered = 0
    for _ in range(SPLITS):
        subset = rng.choice(len(labelled.ids), SUBSETS[name], replace=False)
        mine = ours(labelled, subset)
        if mine.ci95 is not None:
            covered += mine.ci95[0] <= truth <= mine.ci95[1]
        try:
            theirs = rogan_gladen_estimate(labelled.judge, labelled.human[subset], subset).point
        except ValueError:  # truescore refuses where the correction is undefined
            assert math.isnan(mine.rate) and mine.reason
        else:
            assert mine.rate == pytest.approx(theirs, abs=1e-12)
    # An undefined interval counts as a miss.
    assert covered / SPLITS >= 0.93


def test_interval_formula_limits():
    # A perfect judge: the corrected rate is the apparent rate over all judged cases, and
    # with every case labelled the interval is Wilson's.
    assert rogan_gladen_interval(30, 100, tp=30, fn=0, tn=70, fp=0) == pytest.approx(
        wilson_interval(30, 100), abs=1e-12
    )
    # More labels (of the same 1000 judged) narrow the interval towards Wilson's on the
    # apparent rate; fewer widen it.
    few = rogan_gladen_interval(480, 1000, tp=27, fn=3, tn=49, fp=21)
    many = rogan_gladen_interval(480, 1000, tp=270, fn=30, tn=490, fp=210)
    assert few[0] < 0.3 < few[1]
    assert few[1] - few[0] > many[1] - many[0] > 0
    assert all(math.isnan(v) for v in rogan_gladen_interval(50, 100, tp=5, fn=5, tn=5, fp=5))
    with pytest.raises(ValueError, match="labelled cases but only"):
        rogan_gladen_interval(5, 10, tp=5, fn=5, tn=5, fp=5)
    assert rogan_gladen(0.48, 0.9, 0.7) == pytest.approx(0.3)


def test_undefined_correction_says_why():
    coin = corrected_pass_rate(50, 100, tp=5, fn=5, tn=5, fp=5)
    assert math.isnan(coin.rate) and coin.ci95 is None
    assert "carry no information" in (coin.reason or "")
    one_class = corrected_pass_rate(50, 100, tp=5, fn=5, tn=0, fp=0)
    assert "only one class" in (one_class.reason or "")
