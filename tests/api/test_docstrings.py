"""Every public function and class of the Python API has a docstring with an example, and
the examples run (doctest), from the repository root as the README's do."""

from __future__ import annotations

import doctest
import inspect
from types import ModuleType

import pytest

import judge.api
import judge.engine.frame_out
import judge.engine.frames
import judge.evaluation
import judge.project_config
import judge.report.foreign_runs
from tests.helpers import REPO

MODULES = [
    judge.api,
    judge.engine.frames,
    judge.engine.frame_out,
    judge.evaluation,
    judge.project_config,
    judge.report.foreign_runs,
]


def public_members(module: ModuleType) -> list[tuple[str, object]]:
    out = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value) or inspect.isclass(value):
            out.append((name, value))
            if inspect.isclass(value):
                out += [
                    (f"{name}.{m}", f)
                    for m, f in vars(value).items()
                    if not m.startswith("_") and inspect.isfunction(f)
                ]
    return out


@pytest.mark.parametrize("name", [n for n, _ in public_members(judge.api)])
def test_every_public_name_of_the_api_has_an_example(name: str) -> None:
    value = dict(public_members(judge.api))[name]
    assert value.__doc__ and ">>>" in value.__doc__, f"judge.api.{name} has no example"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_the_examples_run(module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the examples name examples/cases.jsonl
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0 and result.attempted > 0
