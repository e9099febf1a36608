"""judge.jury.plan: who grades what in `mode: cyclic`."""

from __future__ import annotations

import random

from judge.jury.plan import cyclic_plan, juror_of, overlap_ids, overlap_size


def test_the_overlap_size_rounds_half_up_and_stays_within_the_selection() -> None:
    assert overlap_size(0.1, 60) == 6  # 0.1 * 60 is 6.000000000000001 in floats
    assert overlap_size(0.1, 55) == 6 and overlap_size(0.1, 54) == 5
    assert overlap_size(0.01, 10) == 1  # a share gives at least one case
    assert overlap_size(12, 5) == 5 and overlap_size(0, 50) == 0 and overlap_size(0.5, 0) == 0


def test_a_case_keeps_its_juror_and_its_overlap_whatever_the_order_of_the_input() -> None:
    ids = [f"case-{i}" for i in range(200)]
    shuffled = ids[:]
    random.Random(3).shuffle(shuffled)
    assert overlap_ids(ids, 20) == overlap_ids(shuffled, 20)
    plan, other = cyclic_plan(ids, None, 3, 20), cyclic_plan(shuffled, None, 3, 20)
    members = {case_id: m for _, case_id, m in plan}
    assert members == {case_id: m for _, case_id, m in other}
    assert sum(len(m) == 3 for m in members.values()) == 20
    shares = [sum(m == (j,) for m in members.values()) for j in range(3)]
    assert sum(shares) == 180 and min(shares) > 40  # 60 each in expectation


def test_a_plan_follows_the_selection_in_input_order() -> None:
    ids = [f"c{i}" for i in range(30)]
    plan = cyclic_plan(ids, {4, 2, 9, 20}, 2, 1)
    assert [p for p, _, _ in plan] == [2, 4, 9, 20]
    assert len(plan.whole) == 1 and plan.whole <= {"c2", "c4", "c9", "c20"}
    for position, case_id, members in plan:
        assert members == ((0, 1) if case_id in plan.whole else (juror_of(case_id, 2),))
        for juror in members:
            assert position in plan.share(juror)
