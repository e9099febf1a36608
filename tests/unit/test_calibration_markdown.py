"""report.md shows labels, ids and annotator names as written, never as markup (issue 20,
item 12). Before the fix they were embedded raw: a label `<img src=x onerror=...>` became
HTML in any renderer that passes HTML through, `a|b` split a table cell, `[x](url)` a link.
The rendered HTML is checked with markdown-it (CommonMark with GFM tables; rich's own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from markdown_it import MarkdownIt

from calibration import calibrate, write_report
from calibration.report._markdown import code_span, escape_markdown

EVIL_LABEL = '<img src=x onerror="alert(1)">'
LINK_LABEL = "a|b [click](http://evil.example)"
EVIL_NAME = "<script>steal()</script>"
PIPE_NAME = "*bold*|x"
EVIL_ID = "`tick`|<b>id</b>"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def hostile_report(tmp_path: Path) -> str:
    ids = [EVIL_ID, "c1", "c2", "c3", "c4", "c5"]
    truth = [EVIL_LABEL, LINK_LABEL, EVIL_LABEL, LINK_LABEL, EVIL_LABEL, LINK_LABEL]
    judged = [LINK_LABEL, LINK_LABEL, EVIL_LABEL, EVIL_LABEL, EVIL_LABEL, LINK_LABEL]
    human = [
        {"id": i, "label": t, "annotator": who, "slice": EVIL_NAME}
        for i, t in zip(ids, truth, strict=True)
        for who in (EVIL_NAME, PIPE_NAME)
    ]
    judge = [{"id": i, "label": j} for i, j in zip(ids, judged, strict=True)]
    result = calibrate(
        write_jsonl(tmp_path / "judge.jsonl", judge),
        write_jsonl(tmp_path / "human.jsonl", human),
        slice_field="slice",
        n_bootstrap=50,
        seed=0,
    )
    write_report(result, tmp_path / "report")
    return (tmp_path / "report" / "report.md").read_text("utf-8")


def test_hostile_labels_and_names_are_text_in_report_md(tmp_path: Path) -> None:
    text = hostile_report(tmp_path)
    html = MarkdownIt("commonmark").enable("table").render(text)
    for tag in ("<img", "<script", "<b>", "<a "):
        assert tag not in html, tag
    # each value is still there, shown as written (HTML-escaped by the renderer)
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;steal()&lt;/script&gt;" in html
    assert "a|b [click](http://evil.example)" in html
    # no table row gained a cell: every row has as many cells as its header
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        header = len(re.findall(r"<th[ >]", table))
        for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]:
            assert len(re.findall(r"<td[ >]", row)) == header, row


def test_escaping_helpers() -> None:
    assert escape_markdown("a|b\nc") == "a\\|b c"
    assert escape_markdown("[x](y) *z* `w` <v> & ~ !") == (
        "\\[x\\](y) \\*z\\* \\`w\\` \\<v\\> \\& \\~ \\!"
    )
    assert code_span("plain") == "`plain`"
    assert code_span("a`b") == "``a`b``"
    assert code_span("`edge`") == "`` `edge` ``"
    rendered = MarkdownIt("commonmark").render(code_span("x`` <b>y</b>"))
    assert "<code>x`` &lt;b&gt;y&lt;/b&gt;</code>" in rendered
