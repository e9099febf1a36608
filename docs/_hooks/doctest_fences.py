"""Griffe extension (mkdocs.yml, mkdocstrings' `extensions`): a docstring's bare `>>>`
examples rendered as code on the API reference page.

The docstrings give their examples as plain doctest lines (tests/api/test_docstrings.py runs
them), with no `Examples:` section. Read as Markdown, each `>>>` line is three nested
blockquotes and the lines run together into one paragraph; a `[x for x in xs]` in one is read
as a cross-reference. Here each run of doctest lines (a `>>>` line, its `...` continuations
and its shown output, up to a blank line) is fenced as a `pycon` block before the docstring
is parsed, so the source keeps its doctests as they are.
"""

from __future__ import annotations

from typing import Any

import griffe

FENCE = "```"


def fence_doctests(text: str) -> str:
    """The docstring with each run of unindented doctest lines inside a ```pycon fence; lines
    already inside a fence, and indented ones (a section's body), are left as they are."""
    out: list[str] = []
    in_fence = in_doctest = False
    for line in text.splitlines():
        if in_doctest and not line.strip():
            out.append(FENCE)
            in_doctest = False
        if line.lstrip().startswith(FENCE) and not in_doctest:
            in_fence = not in_fence
        elif not in_fence and not in_doctest and line.startswith(">>>"):
            out.append(FENCE + "pycon")
            in_doctest = True
        out.append(line)
    if in_doctest:
        out.append(FENCE)
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fences every loaded object's bare doctest examples (see the module's docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
