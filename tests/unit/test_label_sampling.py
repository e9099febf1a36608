"""Which cases get labelled: square-root allocation, inclusion probabilities that make
Horvitz-Thompson totals exact, the overlap share, and the same draw on every run."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from judge.label.sampling import allocate, select_items, stratified_sample, stratum_of


@pytest.mark.parametrize(
    ("sizes", "n"),
    [
        ({"a": 1000, "b": 3, "c": 100}, 50),
        ({"a": 5, "b": 5}, 4),
        ({"x": 40, "y": 1, "z": 2, "w": 7}, 9),
        ({f"s{i}": 3 for i in range(12)}, 5),  # more strata than labels
        ({"a": 2, "b": 3}, 10),  # more labels than cases: everything
    ],
)
def test_allocation_sums_to_n_and_stays_within_each_stratum(sizes: dict[str, int], n: int) -> None:
    alloc = allocate(sizes, n)
    assert sum(alloc.values()) == min(n, sum(sizes.values()))
    assert all(0 <= alloc[h] <= sizes[h] for h in sizes)


def test_square_root_allocation_oversamples_rare_strata() -> None:
    sizes = {"common": 900, "middle": 90, "rare": 10}
    alloc = allocate(sizes, 100)
    root = {h: math.sqrt(s) for h, s in sizes.items()}
    expected = {h: 100 * r / sum(root.values()) for h, r in root.items()}
    assert all(abs(alloc[h] - expected[h]) < 1 for h in sizes)  # Kish's n * sqrt(N_h) / sum
    proportional = {h: 100 * s / 1000 for h, s in sizes.items()}
    assert alloc["rare"] > proportional["rare"] and alloc["common"] < proportional["common"]


def test_every_stratum_gets_its_floor_when_labels_allow() -> None:
    alloc = allocate({"big": 10_000, "tiny": 2, "one": 1}, 20)
    assert alloc["tiny"] == 2 and alloc["one"] == 1


def test_inclusion_probabilities_make_horvitz_thompson_totals_exact() -> None:
    strata = {f"c{i}": ("rare" if i % 50 == 0 else "common") for i in range(1000)}
    chosen = stratified_sample(strata, 60, seed=7)
    assert len(chosen) == 60
    for stratum, size in Counter(strata.values()).items():
        weights = [1 / p for i, p in chosen.items() if strata[i] == stratum]
        assert sum(weights) == pytest.approx(size)  # sum of 1/pi over the sample = N_h


def test_the_same_seed_draws_the_same_sample_and_another_seed_another() -> None:
    ids = [f"c{i:03d}" for i in range(200)]
    strata = {i: stratum_of(["faithful", "unfaithful"][int(i[1:]) % 2], "ok", ["s"]) for i in ids}
    first = select_items(ids, strata=strata, sample=30, seed=1, overlap=0.2)
    assert first == select_items(ids, strata=strata, sample=30, seed=1, overlap=0.2)
    assert first != select_items(ids, strata=strata, sample=30, seed=2, overlap=0.2)
    assert [i.case_id for i in first] == sorted(i.case_id for i in first)  # input order
    assert sum(i.required == 2 for i in first) == 6


def test_no_sample_means_every_case_with_probability_one() -> None:
    items = select_items(["a", "b", "c"])
    assert [(i.case_id, i.inclusion_probability, i.required) for i in items] == [
        ("a", 1.0, 1),
        ("b", 1.0, 1),
        ("c", 1.0, 1),
    ]
    simple = select_items([f"c{i}" for i in range(10)], sample=4, seed=0)
    assert len(simple) == 4 and {i.inclusion_probability for i in simple} == {0.4}


def test_a_record_without_a_label_is_stratified_by_its_status() -> None:
    assert stratum_of(None, "abstained", []) == "abstained|-"
    assert stratum_of("faithful", "ok", ["returns", "shipping"]) == "faithful|returns"
