"""Several annotators, done as the field does (issue 19 item 4): every item kept (the
median of numeric ratings, tied majorities settled by a documented rule and listed),
Fleiss' kappa over the items with two or more ratings so named annotators give a ceiling,
and the ceiling on the judge's own weights. Checked against irrCAC (recorded figures,
tests/data/calibration/irrcac-figures.json), statsmodels and krippendorff."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from calibration import calibrate
from calibration.agreement.annotators import BETWEEN_LEVELS, TIED, consolidate_annotators
from calibration.agreement.multirater import category_counts, generalised_fleiss_kappa
from calibration.io.labels import read_labels
from tests.calibration_sets import DATA, hanna_ratings

IRRCAC = json.loads((DATA / "irrcac-figures.json").read_text(encoding="utf-8"))
SCALE = [1, 2, 3, 4, 5]
FAST = {"n_bootstrap": 200}


def _counts(rows: list[tuple[str, str, int]]) -> np.ndarray:
    ids = sorted({i for i, _, _ in rows})
    raters = sorted({a for _, a, _ in rows})
    table = {(i, a): v for i, a, v in rows}
    ratings = np.array([[table.get((i, a)) for a in raters] for i in ids], dtype=object)
    return category_counts(ratings, SCALE)


def _write(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text(
        "id,annotator,label\n" + "".join(f"{i},{a},{v}\n" for i, a, v in rows), encoding="utf-8"
    )
    return path


def _thirteen_people(rows: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The same ratings given by 13 named people, 0-3 an item (as FaithBench's, or a
    ``judge label --overlap`` export): no item is rated by everyone."""
    slot = {"rater1": 0, "rater2": 1, "rater3": 2}
    return [(i, f"person{(int(i[-4:]) + slot[a]) % 13}", v) for i, a, v in rows]


@pytest.mark.parametrize("named", [False, True])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_generalised_fleiss_equals_irrcac(named: bool, weights) -> None:
    key = "hanna-relevance-named-annotators" if named else "hanna-relevance-fleiss-weighted"
    expected = IRRCAC[key][f"fleiss_kappa_{weights or 'identity'}"]
    counts = _counts(hanna_ratings(named=named))
    ours = generalised_fleiss_kappa(counts, weights=weights, values=SCALE)
    assert ours == pytest.approx(expected, abs=1e-12)


def test_generalised_fleiss_is_fleiss_1971_on_complete_tables() -> None:
    rows = hanna_ratings()
    ids = sorted({i for i, _, _ in rows})
    table = {(i, a): v for i, a, v in rows}
    wide = np.array([[table[(i, a)] for a in ("rater1", "rater2", "rater3")] for i in ids])
    expected = fleiss_kappa(aggregate_raters(wide)[0], method="fleiss")
    assert generalised_fleiss_kappa(_counts(rows)) == pytest.approx(expected, abs=1e-12)


def test_named_annotators_give_a_defined_ceiling(tmp_path: Path) -> None:
    rows = _thirteen_people(hanna_ratings(named=True))
    human = _write(tmp_path / "people.csv", rows)
    r = calibrate(DATA / "hanna-relevance" / "rater1.csv", human, **FAST)
    inter = r["inter_annotator"]
    assert len(inter["annotators"]) == 13 and inter["n_complete"] == 0
    # Before: Fleiss' kappa over the items everyone rated, i.e. none: no ceiling at all.
    expected = IRRCAC["hanna-relevance-named-annotators"]["fleiss_kappa_identity"]
    assert inter["fleiss_kappa"] == pytest.approx(expected, abs=1e-12)
    assert inter["ceiling"] == inter["fleiss_kappa"] and inter["method"] == "fleiss_kappa"
    lo, hi = inter["ceiling_ci95"]
    assert lo < inter["ceiling"] < hi
    assert inter["n_multiply_rated"] == int((_counts(rows).sum(axis=1) >= 2).sum())
    # Krippendorff's alpha over the same ratings, as the krippendorff package computes it.
    people = sorted({a for _, a, _ in rows})
    ids = sorted({i for i, _, _ in rows})
    table = {(i, a): float(v) for i, a, v in rows}
    data = np.array([[table.get((i, a), np.nan) for i in ids] for a in people])
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert inter["krippendorff_alpha"] == pytest.approx(theirs, abs=1e-12)
    assert any("people agree with each other at Fleiss' kappa" in x for x in r["readiness_reasons"])


def test_the_ceiling_is_on_the_judges_weights(tmp_path: Path) -> None:
    folder = DATA / "hanna-relevance"
    r = calibrate(folder / "rater1.csv", folder / "humans_long.csv", weights="quadratic", **FAST)
    inter = r["inter_annotator"]
    expected = IRRCAC["hanna-relevance-fleiss-weighted"]["fleiss_kappa_quadratic"]
    assert inter["weighted_fleiss_kappa"] == pytest.approx(expected, abs=1e-12)
    assert inter["ceiling"] == inter["weighted_fleiss_kappa"] != inter["fleiss_kappa"]
    assert inter["ceiling_weights"] == "quadratic"
    sentence = next(x for x in r["readiness_reasons"] if x.startswith("people agree"))
    assert f"quadratic weighted Fleiss' kappa {expected:.3f} (one annotator against" in sentence
    lo, hi = inter["ceiling_ci95"]
    assert lo < expected < hi
    # Two annotators: their weighted Cohen's kappa.
    two = _write(tmp_path / "two.csv", [x for x in hanna_ratings() if x[1] != "rater3"])
    r2 = calibrate(folder / "rater1.csv", two, weights="linear", **FAST)
    pair = r2["inter_annotator"]["pairwise"]["rater1 vs rater2"]
    assert r2["inter_annotator"]["ceiling"] == pair["weighted_kappa"] != pair["kappa"]


def test_hanna_keeps_every_item_with_the_median_rating() -> None:
    human = read_labels(DATA / "hanna-relevance" / "humans_long.csv")
    consolidated = consolidate_annotators(human)
    by_id: dict[str, list[int]] = {}
    for i, _, v in hanna_ratings():
        by_id.setdefault(i, []).append(v)
    assert len(consolidated.records) == 1056 and not consolidated.excluded
    assert all(r.value == int(np.median(by_id[r.id])) for r in consolidated.records)
    assert consolidated.adjudicated == {}


def test_ties_are_kept_settled_by_the_documented_rule_and_listed(tmp_path: Path) -> None:
    text = tmp_path / "text.csv"
    text.write_text(
        "id,annotator,label\n"
        "a,ann,pass\na,bo,fail\n"  # tie: the failing label
        "b,ann,pass\nb,bo,pass\nb,cy,fail\n"  # majority
        "c,ann,pass\n",  # one rating
        encoding="utf-8",
    )
    consolidated = consolidate_annotators(read_labels(text))
    assert {r.id: r.value for r in consolidated.records} == {"a": "fail", "b": "pass", "c": "pass"}
    assert consolidated.adjudicated == {TIED: ["a"]}
    numbers = _write(tmp_path / "numbers.csv", [("x", "ann", 2), ("x", "bo", 5), ("y", "ann", 4)])
    consolidated = consolidate_annotators(read_labels(numbers))
    assert {r.id: r.value for r in consolidated.records} == {"x": 2, "y": 4}
    assert consolidated.adjudicated == {BETWEEN_LEVELS: ["x"]}


def test_a_few_unanimous_items_never_give_alpha_an_interval_of_width_zero(tmp_path: Path) -> None:
    """Before: four items on which two people agree gave alpha 1.0 in [1.0, 1.0]."""
    from calibration.agreement.annotators import inter_annotator_agreement

    rows = [(f"i{n}", person, n % 2) for n in range(4) for person in ("ann", "bob")]
    inter = inter_annotator_agreement(
        read_labels(_write(tmp_path / "p.csv", rows)), n_bootstrap=200
    )
    assert inter["krippendorff_alpha"] == 1.0
    lo, hi = inter["krippendorff_alpha_ci95"]
    assert hi == 1.0 and lo < 0.5
