"""Learned juror weights (Dawid-Skene with supervised confusions): the posterior by hand,
ties left undecided, and a reliable juror outvoting two that share their errors."""

from __future__ import annotations

import random

import numpy as np
import pytest

from calibration.compare.jury import learned_weights
from calibration.estimates.dawid_skene import class_prior, juror_confusions, posterior_labels

LABELS = ["x", "y", "z"]


def test_confusions_are_smoothed_row_shares_and_the_posterior_follows_the_formula() -> None:
    human = ["x", "x", "y", "z"]
    jurors = {"a": ["x", "y", "y", None], "b": ["x", "x", "z", "z"]}
    pi = juror_confusions(human, jurors, labels=LABELS)
    assert pi["a"][0].tolist() == pytest.approx([2 / 5, 2 / 5, 1 / 5])  # x: one x, one y, +1
    assert pi["a"][2].tolist() == pytest.approx([1 / 3] * 3)  # z: no vote, the prior only
    assert np.allclose(pi["b"].sum(axis=1), 1)
    prior = class_prior(human, labels=LABELS)
    assert prior.tolist() == pytest.approx([3 / 7, 2 / 7, 2 / 7])
    [label] = posterior_labels({"a": ["y"], "b": ["z"]}, pi, prior, labels=LABELS)
    by_hand = {c: prior[i] * pi["a"][i, 1] * pi["b"][i, 2] for i, c in enumerate(LABELS)}
    assert label == max(by_hand, key=by_hand.__getitem__)


def test_a_tie_in_the_posterior_and_a_case_with_no_vote_are_undecided() -> None:
    flat = {"a": np.full((3, 3), 1 / 3)}
    prior = np.full(3, 1 / 3)
    assert posterior_labels({"a": ["x", None]}, flat, prior, labels=LABELS) == [None, None]


def test_learned_weights_beat_the_vote_of_two_jurors_who_share_their_errors() -> None:
    rng = random.Random(5)
    n = 400
    human = [rng.choice(LABELS) for _ in range(n)]
    good, shared = [], []
    for h in human:
        wrong = rng.choice([c for c in LABELS if c != h])
        good.append(h if rng.random() < 0.9 else wrong)
        shared.append(h if rng.random() < 0.6 else wrong)
    jurors = {"a": good, "b": shared, "c": list(shared)}
    vote = [
        max(set(v), key=v.count) if len(set(v)) < 3 else None
        for v in zip(good, shared, shared, strict=True)
    ]
    result = learned_weights(
        [str(i) for i in range(n)], human, jurors, vote, labels=LABELS, n_bootstrap=200
    )
    assert result is not None and (result["dev"], result["test"]) == (200, 200)
    kappa = result["kappa_on_test"]
    assert kappa["learned"] > kappa["vote"] + 0.2
    assert result["learned_vs_vote"]["verdict"] == "better"
    # the model counts b and c as two independent witnesses: where they agree on a wrong
    # label against a, it sides with them, so it still trails a alone (its blind spot)
    assert result["learned_vs_best"]["verdict"] == "worse"
    assert kappa["learned"] < kappa["a"]
