"""`calibration.compare.changes.case_changes`: which cases regressed, improved or cannot be
compared, on a hand example and on seeded random runs checked against a plain loop."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.compare.changes import Outcome, case_changes


def test_a_hand_example() -> None:
    a: dict[str, Outcome] = {
        "up": ("ok", 0.2),
        "down": ("ok", 0.9),
        "down-more": ("ok", 1.0),
        "same": ("ok", 0.5),
        "rounded": ("ok", 0.3333333),
        "failed-b": ("ok", 0.4),
        "abstained-a": ("abstained", None),
        "ok-without-score": ("ok", None),
        "only-a": ("ok", 1.0),
    }
    b: dict[str, Outcome] = {
        "down": ("ok", 0.5),
        "up": ("ok", 0.7),
        "down-more": ("ok", 0.0),
        "same": ("ok", 0.5),
        "rounded": ("ok", 0.3333333 + 1e-14),
        "failed-b": ("parse_error", None),
        "abstained-a": ("ok", 1.0),
        "ok-without-score": ("ok", 0.5),
        "only-b": ("ok", 0.0),
    }
    changes = case_changes(a, b)
    assert changes["regressed"] == [
        {"id": "down-more", "a": 1.0, "b": 0.0, "diff": -1.0},
        {"id": "down", "a": 0.9, "b": 0.5, "diff": pytest.approx(-0.4)},
    ]
    assert changes["improved"] == [{"id": "up", "a": 0.2, "b": 0.7, "diff": 0.5}]
    assert changes["not_comparable"] == [
        {"id": "failed-b", "a": "ok", "b": "parse_error"},
        {"id": "abstained-a", "a": "abstained", "b": "ok"},
        {"id": "ok-without-score", "a": "ok", "b": "ok"},
    ]


@pytest.mark.parametrize("seed", range(5))
def test_random_runs_match_a_plain_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"c{i}" for i in range(300)]
    statuses = ["ok", "ok", "ok", "ok", "parse_error", "abstained", "api_error"]

    def run() -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        for case_id in ids:
            status = str(rng.choice(statuses))
            score = float(rng.integers(0, 5)) / 4 if status == "ok" else None
            out[case_id] = (status, score)
        return out

    a, b = run(), run()
    del b["c0"]  # one side only: not paired
    changes = case_changes(a, b)
    both_ok = [i for i in ids[1:] if a[i][0] == "ok" and b[i][0] == "ok"]
    fell = {i for i in both_ok if b[i][1] < a[i][1]}  # type: ignore[operator]
    rose = {i for i in both_ok if b[i][1] > a[i][1]}  # type: ignore[operator]
    assert {c["id"] for c in changes["regressed"]} == fell
    assert {c["id"] for c in changes["improved"]} == rose
    apart = [i for i in ids[1:] if i not in both_ok]
    assert [c["id"] for c in changes["not_comparable"]] == apart
    assert all(
        (c["a"], c["b"]) == (a[c["id"]][0], b[c["id"]][0]) for c in changes["not_comparable"]
    )
    drops = [c["diff"] for c in changes["regressed"]]
    rises = [c["diff"] for c in changes["improved"]]
    assert drops == sorted(drops) and rises == sorted(rises, reverse=True)
