"""LLM-as-judge grading: versioned rubrics, a pinned judge, bias probes and calibration.

The names below are imported on first use (PEP 562 `__getattr__`): `import judge` and the
`judge` command start without loading the HTTP client, scipy or the service framework,
and `from judge import Judge` works as usual. Type checkers read the imports under
TYPE_CHECKING.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.api import Judge, iter_grade, make_backend
    from judge.app.certify import certify_files as certify
    from judge.config import JudgeConfig
    from judge.engine.frame_out import records_frame, records_table
    from judge.engine.grader import Grader
    from judge.engine.rules import RulesJudge, token_f1
    from judge.errors import ApiError, InputError, JudgeError, RubricError
    from judge.rubric import Rubric, list_rubrics, load_rubric
    from judge.schemas import Case, GradedRecord, JudgeInfo, Usage

_HOMES = {
    "judge.api": ("Judge", "iter_grade", "make_backend"),
    "judge.config": ("JudgeConfig",),
    "judge.errors": ("ApiError", "InputError", "JudgeError", "RubricError"),
    "judge.engine.grader": ("Grader",),
    "judge.engine.frame_out": ("records_frame", "records_table"),
    "judge.rubric": ("Rubric", "list_rubrics", "load_rubric"),
    "judge.engine.rules": ("RulesJudge", "token_f1"),
    "judge.schemas": ("Case", "GradedRecord", "JudgeInfo", "Usage"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
_ALIASES = {"certify": ("judge.app.certify", "certify_files")}  # name here: (home, name there)
DISTRIBUTION = "llm-judge"

__all__ = [
    "ApiError",
    "Case",
    "GradedRecord",
    "Grader",
    "InputError",
    "Judge",
    "JudgeConfig",
    "JudgeError",
    "JudgeInfo",
    "Rubric",
    "RubricError",
    "RulesJudge",
    "Usage",
    "certify",
    "iter_grade",
    "list_rubrics",
    "load_rubric",
    "make_backend",
    "records_frame",
    "records_table",
    "token_f1",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _installed_version()
    home, there = _ALIASES.get(name) or (_HOME_OF.get(name), name)
    if home is None:
        raise AttributeError(f"module 'judge' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), there)
    globals()[name] = value  # later look-ups find it without this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})


def _installed_version() -> str:
    """The installed distribution's version; a source tree never installed has none."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
