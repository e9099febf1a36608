"""`judge` command line: argument parsing and printing only; the work is in judge.app.

One module per subcommand (`grade`, `rubrics`, `probe`, `calibrate`, `gate`, `batch`,
`serve`; `label` lives with its app in `judge.label`), loaded only when that subcommand
runs, so `judge --help`, `--version` and `rubrics` start without the HTTP client, scipy or
FastAPI (`judge.cli._parser`). Shared options and printing are in `judge.cli._common`.
"""

from judge.cli._common import EXIT_FATAL, EXIT_GATE, EXIT_OK, EXIT_USAGE
from judge.cli._main import COMMANDS, build_parser, main, version_text

__all__ = [
    "COMMANDS", "EXIT_FATAL", "EXIT_GATE", "EXIT_OK", "EXIT_USAGE", "build_parser", "main",
    "version_text",
]  # fmt: skip
