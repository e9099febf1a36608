"""Integer scales shared by the generic kinds: a scale's spec, its typed score field and
the normalisation (s - min) / (max - min)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_SCALE_POINTS = 101  # enums beyond this bloat the schema the provider bills


class Scale(BaseModel):
    """`{min: 1, max: 5}`: whole numbers from min to max."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int
    max: int

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.max <= self.min:
            raise ValueError(f"scale max ({self.max}) must be above min ({self.min})")
        if self.max - self.min + 1 > MAX_SCALE_POINTS:
            raise ValueError(f"a scale has at most {MAX_SCALE_POINTS} points")
        return self

    @property
    def points(self) -> list[int]:
        return list(range(self.min, self.max + 1))

    def field_type(self) -> Any:
        """`Literal[min, ..., max]`: strict structured output then enforces the range."""
        return Literal.__getitem__(tuple(self.points))

    def normalise(self, value: float) -> float:
        return (value - self.min) / (self.max - self.min)

    def from_share(self, share: float) -> int:
        """The scale point nearest to a share in 0..1 (the rules judge's mapping)."""
        return self.min + round(max(0.0, min(1.0, share)) * (self.max - self.min))


class PassScale(Scale):
    """A scale with the point from which an answer passes (`pass_at`, default max)."""

    pass_at: int | None = Field(default=None)

    @model_validator(mode="after")
    def _pass_inside(self) -> PassScale:
        if self.pass_at is not None and not self.min <= self.pass_at <= self.max:
            raise ValueError(f"pass_at {self.pass_at} is outside {self.min}..{self.max}")
        return self

    @property
    def passing(self) -> int:
        return self.max if self.pass_at is None else self.pass_at
