"""MkDocs hook: a page whose HTML holds a blockquote inside a blockquote is a warning, so the
strict build (.ci/docs-build) fails on it.

That nesting is what Markdown makes of a doctest line left bare (`>>> x` is three quote
levels, its code run together into one paragraph): an example that reads as quotes instead
of code. The API reference's docstrings are fenced by docs/_hooks/doctest_fences.py; this
catches a page or a docstring that slips past it. No page quotes a quote on purpose.
"""

from __future__ import annotations

import logging
import re
from typing import Any

log = logging.getLogger("mkdocs.hooks.quoted_examples")

NESTED_QUOTE = re.compile(r"<blockquote>\s*<blockquote>")


def quoted_examples(html: str) -> int:
    """How many nested blockquotes (bare `>>>` examples, most likely) the HTML holds."""
    return len(NESTED_QUOTE.findall(html))


def on_post_page(output: str, *, page: Any, config: Any) -> str:
    found = quoted_examples(output)
    if found:
        log.warning(
            "%s: %d nested blockquote(s), most likely `>>>` examples read as Markdown "
            "quotes: fence them as code",
            page.file.src_uri,
            found,
        )
    return output
