"""A certificate (and a resumed run) is bound to its judges' models: a name the server
spelled with a snapshot's date is the same model, a longer name that is not a date is
another one. Before the fix a certificate made for `gpt-4o` was accepted for `gpt-4o-mini`
(and one for `gpt-4` for `gpt-4o`): any name starting with the other's passed."""

from __future__ import annotations

import pytest

from judge.engine.identity import judge_differences, same_model


@pytest.mark.parametrize(
    ("asked", "served"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o", "gpt-4o-2024-08-06"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022"),
        ("gpt-4", "gpt-4-0613"),
    ],
)
def test_a_snapshot_of_the_model_is_the_same_model(asked: str, served: str) -> None:
    assert same_model(asked, served)
    assert judge_differences({"model": asked}, {"model": served}) == []


@pytest.mark.parametrize(
    ("asked", "served"),
    [
        ("gpt-4o-mini", "gpt-4o"),
        ("gpt-4o", "gpt-4o-mini-2024-07-18"),
        ("gpt-4o", "gpt-4"),
        ("llama-3.1-70b", "llama-3.1"),
        ("gpt-4o-2024-08-06", "gpt-4o-2024-05-13"),
    ],
)
def test_another_model_is_a_difference(asked: str, served: str) -> None:
    assert not same_model(asked, served)
    assert judge_differences({"model": asked}, {"model": served}) == [
        f"model {served!r} -> {asked!r}"
    ]
