"""What a kind needs for a verdict's confidence: where its label is written (`LabelSite`,
read by judge.engine.confidence from the judge's token probabilities), how sites that must
all pass combine, and the `confidence` field a rubric may ask the judge to fill
(`confidence_scale`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class LabelSite:
    """One categorical choice the judge writes in its verdict: where (`path`, keys and list
    indexes from the verdict's root, e.g. `("claims", 2, "verdict")`), what it wrote, and
    the values it could have written there. The confidence from log-probabilities
    (`judge.engine.confidence`) reads the judge's probabilities at that value."""

    path: tuple[str | int, ...]
    written: Any
    allowed: tuple[Any, ...]


def field_choices(model: type[BaseModel], name: str) -> tuple[Any, ...]:
    """The values a verdict field may take: a `Literal`'s values, (True, False) for a
    boolean; empty when the field is free (text, a number without a fixed set)."""
    info = model.model_fields.get(name)
    annotation = info.annotation if info is not None else None
    if annotation is bool:
        return (True, False)
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return ()


def all_pass_confidence(
    dists: list[dict[Any, float]], passing: Any, *, passed: bool
) -> float | None:
    """The confidence in a label that passes only when every site passes (faithfulness:
    every claim supported; a conversation: every turn passes): with each site's
    probability of `passing` p_i, taken as independent, P(pass) = prod p_i; the
    confidence is P(pass) for a passing label, 1 - P(pass) for a failing one. None
    without a site."""
    if not dists:
        return None
    p_pass = 1.0
    for dist in dists:
        p_pass *= dist.get(passing, 0.0)
    return p_pass if passed else 1.0 - p_pass


# `confidence_scale` in a generic kind's rubric file: the verdict then has a `confidence`
# field from 0 to this (a share, or a percentage), the judge's own stated confidence
ConfidenceScale = Literal[1, 100]


def confidence_fields(scale: int | None) -> dict[str, Any]:
    """The verdict field a rubric with `confidence_scale` adds (none without one): a number
    from 0 to `scale`, or null where the judge states none (the rules judge)."""
    if scale is None:
        return {}
    return {"confidence": (float | None, Field(..., ge=0, le=scale))}


def confidence_instruction(scale: int | None) -> list[str]:
    """The line a rubric with `confidence_scale` adds to its instructions."""
    if scale is None:
        return []
    return [
        f"Also give `confidence`: how sure you are that your verdict is right, from 0 to "
        f"{scale} ({scale} = certain)."
    ]
