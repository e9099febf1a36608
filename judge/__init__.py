"""LLM-as-judge grading: versioned rubrics, a pinned judge, bias probes and calibration."""

from judge.api import Judge, make_backend
from judge.config import JudgeConfig
from judge.errors import ApiError, InputError, JudgeError, RubricError
from judge.grader import Grader
from judge.rubric import Rubric, list_rubrics, load_rubric
from judge.rules import RulesJudge, token_f1
from judge.schemas import Case, GradedRecord, JudgeInfo, Usage

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
    "list_rubrics",
    "load_rubric",
    "make_backend",
    "token_f1",
]
