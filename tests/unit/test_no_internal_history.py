"""User text carries no internal history (issue 36): no "issue N" in any string of the
package (help texts, error messages, report templates, docstrings that the API reference
shows) nor in the label app's and the viewer's pages. Comments may cite issues; they are
not user text, and the AST holds none."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

HISTORY = re.compile(r"\b(before |since |after )?issue \d+|\(issue \d+", re.IGNORECASE)


def strings_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text("utf-8"))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_string_of_the_package_cites_an_issue() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {HISTORY.search(text)[0]!r}"
        for package in ("judge", "calibration")
        for path in sorted((REPO / package).rglob("*.py"))
        for line, text in strings_of(path)
        if HISTORY.search(text)
    ]
    assert found == []


def test_no_page_of_the_apps_cites_an_issue() -> None:
    pages = [*(REPO / "judge").glob("*/static/*.*"), *(REPO / "rubrics").rglob("*.yaml")]
    assert pages
    found = [
        str(page.relative_to(REPO))
        for page in pages
        if page.suffix in (".html", ".js", ".css", ".yaml")
        and HISTORY.search(page.read_text("utf-8"))
    ]
    assert found == []
