"""The docs' strict build (.ci/docs-build) fails on any warning: CI's own script, run on a
copy of the docs with a broken link and a bare `>>>` example planted, exits non-zero and
names both. And the docstrings' doctest examples are fenced as code for the API reference."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

from _examples import REPO

BUILD_TIMEOUT_S = 300


def load_hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "docs" / "_hooks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def copy_of_the_docs(root: Path) -> Path:
    """A tree CI's build script can build as it builds the repository: the docs, the config
    and the script copied (to plant into), the code the API reference reads linked."""
    shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "mkdocs.yml", root / "mkdocs.yml")
    (root / ".ci").mkdir()
    shutil.copy2(REPO / ".ci" / "docs-build", root / ".ci" / "docs-build")
    for package in ("judge", "calibration", "rubrics"):
        (root / package).symlink_to(REPO / package)
    return root


def test_the_ci_build_fails_on_a_planted_broken_link_and_a_quoted_example(tmp_path: Path) -> None:
    root = copy_of_the_docs(tmp_path / "repo")
    page = root / "docs" / "guides" / "grading.md"
    page.write_text(
        page.read_text("utf-8") + "\nSee [the missing page](no-such-page.md).\n\n>>> print(1)\n1\n",
        "utf-8",
    )
    done = subprocess.run(
        ["bash", str(root / ".ci" / "docs-build"), str(tmp_path / "site")],
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    assert "no-such-page.md" in done.stdout
    assert "guides/grading.md: 1 nested blockquote(s)" in done.stdout
    assert "Aborted with 2 warnings in strict mode" in done.stdout


def test_bare_doctest_lines_are_fenced_and_the_rest_is_left_alone() -> None:
    fence = load_hook("doctest_fences").fence_doctests
    docstring = (
        "Grade one case.\n\n"
        ">>> [r.id for r in rs]\n['1']\n>>> for x in xs:\n...     print(x)\n\n"
        "Then prose.\n\n```python\n>>> kept\n```\n\n    >>> indented\n"
    )
    assert fence(docstring) == (
        "Grade one case.\n\n"
        "```pycon\n>>> [r.id for r in rs]\n['1']\n>>> for x in xs:\n...     print(x)\n```\n\n"
        "Then prose.\n\n```python\n>>> kept\n```\n\n    >>> indented"
    )
    assert fence("Ends in an example.\n\n>>> 1 + 1\n2") == (
        "Ends in an example.\n\n```pycon\n>>> 1 + 1\n2\n```"
    )


def test_the_api_docstrings_examples_render_as_code_once_fenced() -> None:
    """The docstrings of the reference page's Judge, as Markdown: bare, their examples are
    nested quotes (the issue); fenced, they are code and no quote is left."""
    import inspect

    import markdown

    import judge.api

    fence = load_hook("doctest_fences").fence_doctests
    count = load_hook("quoted_examples").quoted_examples
    judge_class = judge.api.Judge
    for member in (judge_class, judge_class.grade_many, judge_class.agrade_many):
        docstring = inspect.getdoc(member) or ""
        bare = markdown.markdown(docstring, extensions=["pymdownx.superfences"])
        fenced = markdown.markdown(fence(docstring), extensions=["pymdownx.superfences"])
        assert count(bare) > 0, member
        assert count(fenced) == 0 and "<blockquote>" not in fenced, member
        assert "&gt;&gt;&gt; " in fenced and "<code>" in fenced, member


def test_a_nested_blockquote_is_what_the_build_counts() -> None:
    count = load_hook("quoted_examples").quoted_examples
    assert count("<blockquote>\n<blockquote>\n<blockquote>\n<p>x = 1</p>") == 1
    assert count("<blockquote><p>a quote</p></blockquote><pre>&gt;&gt;&gt; x</pre>") == 0
