"""What a jury spends: each juror's price, and the cost and requests per juror and per case.

A juror's price (USD per million prompt and completion tokens) is its own `price` in the
jury file, else the one given for the run (`--price-input/--price-output`, else the list
price of its model at OpenAI's endpoint: judge.engine.pricing); a cost is unknown (None)
where a price is. The panel's cost is the sum of its jurors' costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.jury.config import Jury

Prices = tuple[float, float] | None  # USD per million prompt, completion tokens


def juror_prices(jury: Jury, prices: Prices | list[Prices]) -> list[Prices]:
    """Each juror's price: its own `price`, else the given one (for it, or for all)."""
    given = list(prices) if isinstance(prices, list) else [prices] * len(jury.jurors)
    return [
        (j.price.input, j.price.output) if j.price is not None else p
        for j, p in zip(jury.jurors, given, strict=True)
    ]


def panel_cost(
    names: Sequence[str],
    summaries: Sequence[dict[str, Any]],
    prices: Sequence[Prices],
    cases: int,
) -> dict[str, Any]:
    """What each juror's records cost and how many requests they took (a record not from
    the cache took one, its repair aside; a pairwise juror's summary counts both orders), this run's requests (`sent_this_run`), and the
    panel's totals and per case. A cost is unknown (None) where a juror's price is."""
    jurors = {}
    for name, summary, price in zip(names, summaries, prices, strict=True):
        jurors[name] = {
            "price_per_million": list(price) if price is not None else None,
            "cost_usd": summary.get("estimated_cost_usd"),
            "requests": summary.get("requests", summary["cases"] - summary.get("cached", 0)),
            "sent_this_run": summary["run"]["sent"],
            "cases": summary["cases"],
        }
    costs = [j["cost_usd"] for j in jurors.values()]
    total = None if any(c is None for c in costs) else round(sum(costs), 6)
    requests = sum(j["requests"] for j in jurors.values())
    return {
        "jurors": jurors,
        "total_usd": total,
        "per_case_usd": None if total is None or not cases else round(total / cases, 8),
        "requests": requests,
        "requests_per_case": round(requests / cases, 6) if cases else None,
        "sent_this_run": sum(j["sent_this_run"] for j in jurors.values()),
    }
