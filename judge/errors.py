"""One error tree for the project.

Every error carries its evidence (file, line, case id, status code) so that the message a
user sees says what is wrong and where. SDK exceptions are translated in `judge.client` only.
"""

from __future__ import annotations

import stat


class JudgeError(Exception):
    """Base class of every error this project raises on purpose."""


class RubricError(JudgeError):
    """A rubric file is missing, malformed, or does not match the lock."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class InputError(JudgeError):
    """An input file does not validate. `problems` lists each (line, case id, message)."""

    def __init__(self, path: str, problems: list[tuple[int | None, str | None, str]]) -> None:
        self.path = path
        self.problems = problems
        lines = []
        for line, case_id, message in problems:
            where = path if line is None else f"{path}:{line}"
            who = f" (id {case_id!r})" if case_id else ""
            lines.append(f"{where}{who}: {message}")
        super().__init__("\n".join(lines))


class UsageError(JudgeError):
    """The command line or the configuration asks for something that cannot be done."""


class OutputConflictError(UsageError):
    """An output file holds something this run must not append to or replace (another
    rubric's or judge's records, or a file that is not ours); nothing was written.
    `rerun`: the flag that makes the same command go through (`--overwrite`), which the
    command line adds to what the user typed to print the one command to run."""

    def __init__(self, message: str, *, rerun: str | None = None) -> None:
        super().__init__(message)
        self.rerun = rerun


class OutputWriteError(JudgeError):
    """An output file could not be written (a full disk, a quota): the run failed, and
    what was written before is kept whole, for the same command to resume."""

    def __init__(self, path: str, cause: OSError, *, resume: str) -> None:
        self.path = path
        reason = cause.strerror or str(cause)
        super().__init__(f"{path}: cannot write ({reason}); {resume}")


class ApiError(JudgeError):
    """A call to the judge endpoint failed.

    `transient` errors are retried; `fatal` ones stop the run at once because every later
    request would fail the same way (bad key, unknown model).
    """

    transient = False
    fatal = False
    # the endpoint that failed, when the one who raised it knows better than the command line
    # (a juror's own base_url: `judge.jury.run.naming`)
    endpoint: str | None = None

    def __init__(
        self, message: str, *, status_code: int | None = None, retry_after: float | None = None
    ) -> None:
        self.status_code = status_code
        self.retry_after = retry_after
        prefix = f"HTTP {status_code}: " if status_code else ""
        super().__init__(prefix + message)


class RateLimitError(ApiError):
    transient = True


class ServerError(ApiError):
    transient = True


class ApiTimeoutError(ApiError):
    transient = True


class ApiConnectionError(ApiError):
    transient = True


class AuthError(ApiError):
    fatal = True


class ModelNotFoundError(ApiError):
    fatal = True


class BadRequestError(ApiError):
    """The server refused the request as malformed (HTTP 400/422); not retried."""


_FILE_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def refused_not_regular(mode: int) -> str:
    """The words for refusing a path whose ``st_mode`` is not a regular file's:
    ``refused: a FIFO, not a regular file``."""
    what = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return f"refused: {what}, not a regular file"
