"""What the service's routes share: its state (config, judges, job store and runner, the
redactor) and the checks every grading route applies to the cases it is sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judge.engine.inputs import to_case
from judge.errors import RubricError, UsageError
from judge.rubric import Rubric
from judge.schemas import Case
from judge.service._http import ServiceError
from judge.service._judges import JudgePool
from judge.service._models import CaseIn
from judge.service.config import ServiceConfig
from judge.service.stores import Runner, Store


@dataclass
class ServiceState:
    """What the routes share: the config, judges, job store and runner, the redactor."""

    config: ServiceConfig
    pool: JudgePool
    store: Store
    redact: Callable[[str], str]
    runner: Runner | None = None

    def jobs(self) -> Runner:
        if self.runner is None:
            raise ServiceError(503, "starting", "the service is still starting")
        return self.runner

    def pick(self, rubric_ref: str, judge: str | None) -> tuple[Rubric, str]:
        """The rubric and judge a request names, or a 422 naming the field."""
        name = self.pool.resolve(judge)
        if name is None:
            known = ", ".join(self.pool.names())
            raise ServiceError(
                422, "unknown_judge", f"no judge named {judge!r} (known: {known})", field="judge"
            )
        try:
            rubric = self.pool.rubric(rubric_ref)
        except RubricError as exc:
            raise ServiceError(422, "unknown_rubric", str(exc), field="rubric") from None
        try:
            self.pool.check_certificate(name, rubric)
        except UsageError as exc:  # the judge is certified for another rubric (or judge)
            raise ServiceError(422, "not_certified", str(exc), field="rubric") from None
        return rubric, name


def grade_limit(state: ServiceState, cases: list[CaseIn]) -> None:
    """413 when a synchronous request lists more cases than the limit."""
    limit = state.config.limits.grade_cases
    if len(cases) > limit:
        raise ServiceError(
            413, "too_many_cases", f"at most {limit} cases per request; use /v1/jobs", field="cases"
        )


def check_cases(items: list[CaseIn], rubric: Rubric) -> list[Case]:
    """Engine cases, validated as `judge grade` validates a file; a 422 names the field."""
    cases: list[Case] = []
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        row = item.row()
        case, problem = to_case(row, rubric)
        if case is None:
            raise ServiceError(
                422,
                "invalid_case",
                f"cases[{index}]: {problem}",
                field=_case_field(row, rubric, index),
            )
        if case.id in first:
            raise ServiceError(
                422,
                "invalid_case",
                f"cases[{index}]: duplicate id {case.id!r} (first at cases[{first[case.id]}])",
                field=f"cases[{index}].id",
            )
        first[case.id] = index
        cases.append(case)
    return cases


def _case_field(row: dict[str, Any], rubric: Rubric, index: int) -> str:
    case, _ = to_case(row)
    missing = rubric.missing_inputs(case) if case is not None else []
    return f"cases[{index}].{missing[0]}" if missing else f"cases[{index}]"
