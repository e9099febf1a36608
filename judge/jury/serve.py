"""A jury as one named judge of `judge serve`: a grader that grades a case with every juror.

`PanelCaseGrader` is a `Grader` whose `grade_case` asks every juror's own grader (its
backend, cache, retries, parsing and repair; the jurors concurrently) and returns the
panel's record of the case (judge.jury.records: the jury's rule, quorum and weights, every
vote beside the verdict). Everything that grades with a grader (the service's `/v1/grade`,
its jobs through `judge.engine.files.grade_file`, with their resume by judge id) grades
with a panel unchanged. Only `mode: full` juries are served: the cheaper modes plan a
file's cases ahead (cyclic) or after a first pass (escalate), which a case-by-case grader
cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.engine.grader import Grader
from judge.engine.outcome import Outcome
from judge.errors import ApiError, UsageError
from judge.jury.config import Jury
from judge.jury.records import panel_identity, panel_record
from judge.jury.run import all_jurors, naming
from judge.rubric import Rubric
from judge.schemas import Case, GradedRecord


def check_served_jury(jury: Jury, where: str) -> None:
    """A UsageError for a jury the service cannot serve (module doc)."""
    if jury.mode != "full":
        raise UsageError(
            f"{where}: the service serves a jury of mode: full, not mode: {jury.mode} (that "
            "mode plans a whole file's cases; grade it with `judge grade --jury`)"
        )


class _PanelIdentity:
    """What the engine asks of a panel grader's backend: its name and identity (a panel
    sends, so a run counts its requests); it never evaluates a case itself."""

    def __init__(self, identity: dict[str, Any]) -> None:
        self.name = "jury"
        self._identity = identity

    def cache_identity(self) -> dict[str, Any] | None:
        return self._identity

    async def evaluate(self, rubric: Rubric, case: Case) -> Outcome:
        raise AssertionError("a panel grades through its jurors' graders")

    async def aclose(self) -> None:
        return None


class PanelCaseGrader(Grader):
    """A panel as one grader: each case graded by every juror, the votes tallied."""

    def __init__(self, jury: Jury, rubric: Rubric, graders: Sequence[Grader]) -> None:
        self.jury = jury
        self.graders = tuple(graders)
        identity = panel_identity(jury, [g.identity for g in self.graders])
        concurrency = max(g.concurrency for g in self.graders)
        # its identity (and judge id) is the panel's, as `judge grade --jury` records it
        super().__init__(_PanelIdentity(identity), rubric, cache=None, concurrency=concurrency)

    async def grade_case(self, case: Case, *, use_cache: bool = True) -> GradedRecord:
        """The panel's record of `case`, from every juror's record of it."""

        async def one(number: int) -> GradedRecord:
            try:
                return await self.graders[number].grade_case(case, use_cache=use_cache)
            except ApiError as exc:
                raise naming(exc, self.jury.jurors[number], self.graders[number]) from exc

        records = await all_jurors([one(n) for n in range(len(self.graders))])
        return panel_record(self.rubric, self.jury, records, self.identity)
