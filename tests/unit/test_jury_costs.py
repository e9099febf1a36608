"""judge.jury.costs: each juror's price, and the panel's cost as the sum of its jurors'."""

from __future__ import annotations

from judge.jury.config import Jury
from judge.jury.costs import juror_prices, panel_cost


def jury() -> Jury:
    return Jury.model_validate(
        {
            "jurors": [
                {"name": "a", "model": "m", "price": {"input": 0.15, "output": 0.6}},
                {"name": "b", "model": "m"},
            ]
        }
    )


def test_a_jurors_own_price_wins_over_the_runs() -> None:
    assert juror_prices(jury(), (2.5, 10.0)) == [(0.15, 0.6), (2.5, 10.0)]
    assert juror_prices(jury(), [(1.0, 2.0), (3.0, 4.0)]) == [(0.15, 0.6), (3.0, 4.0)]
    assert juror_prices(jury(), None) == [(0.15, 0.6), None]


def summary(cases: int, cached: int, cost: float | None, sent: int) -> dict[str, object]:
    return {"cases": cases, "cached": cached, "estimated_cost_usd": cost, "run": {"sent": sent}}


def test_the_panel_costs_the_sum_of_its_jurors_and_is_unknown_where_one_is() -> None:
    prices = [(0.15, 0.6), (2.5, 10.0)]
    known = panel_cost(["a", "b"], [summary(10, 0, 0.01, 10), summary(4, 1, 0.03, 0)], prices, 10)
    assert known["total_usd"] == 0.04 and known["per_case_usd"] == 0.004
    assert known["requests"] == 13 and known["requests_per_case"] == 1.3
    assert known["sent_this_run"] == 10
    assert known["jurors"]["b"] == {
        "price_per_million": [2.5, 10.0],
        "cost_usd": 0.03,
        "requests": 3,
        "sent_this_run": 0,
        "cases": 4,
    }
    unknown = panel_cost(["a", "b"], [summary(10, 0, 0.01, 10), summary(4, 0, None, 4)], prices, 10)
    assert unknown["total_usd"] is None and unknown["per_case_usd"] is None
