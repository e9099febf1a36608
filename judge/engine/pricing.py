"""Estimated cost from token counts: a small price table, overridable from the CLI.

Prices are USD per million tokens (input, output), list prices as published by the
provider; a longer matching prefix wins (`gpt-4o-mini` before `gpt-4o`). A model not in the
table, or served anywhere but OpenAI's endpoint, has no estimate unless prices are given;
a run that spent no tokens costs nothing.
"""

from __future__ import annotations

from judge.config import OPENAI_BASE_URL, JudgeConfig, endpoint_of

PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "rules": (0.0, 0.0),
}


def price_for(
    model: str | None, override: tuple[float, float] | None = None
) -> tuple[float, float] | None:
    if override is not None:
        return override
    if not model:
        return None
    name = model.split("/")[-1].lower()
    matches = [prefix for prefix in PRICES_PER_MILLION if name.startswith(prefix)]
    return PRICES_PER_MILLION[max(matches, key=len)] if matches else None


def list_price(model: str | None, base_url: str | None) -> tuple[float, float] | None:
    """The table's price for `model` at OpenAI's own endpoint only: elsewhere the same model
    name says nothing about what a token costs (a local server, a proxy), so it is unknown."""
    if model is None or endpoint_of(base_url) != endpoint_of(OPENAI_BASE_URL):
        return None
    return price_for(model)


def prices_for(
    config: JudgeConfig, *, override: tuple[float, float] | None = None, batch: bool = False
) -> tuple[float, float] | None:
    """USD per million (prompt, completion) tokens of a run: the user's own prices when
    given, else the list price at OpenAI's endpoint (halved through the Batch API, which
    bills half), else None: the cost is then unknown. The one place a price is chosen."""
    if override is not None:
        return override
    prices = list_price(config.model, config.base_url)
    if prices is not None and batch:
        return (prices[0] / 2, prices[1] / 2)
    return prices


def estimate_cost(
    prompt_tokens: int, completion_tokens: int, prices: tuple[float, float] | None
) -> float | None:
    if prompt_tokens == completion_tokens == 0:
        return 0.0  # nothing spent costs nothing, whatever the price
    if prices is None:
        return None
    return (prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1_000_000
