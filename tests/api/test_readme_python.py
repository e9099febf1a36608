"""The Python guide's "Python API" section (docs/guides/python.md) runs as written: as a
script, and cell by cell in a real Jupyter kernel (nbclient + ipykernel), where the sync call
used to raise `asyncio.run() cannot be called from a running event loop`. Both print the
same record. (`python -m pytest docs` checks the same blocks' shown output, outside a
kernel.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.testing import FakeOpenAIServer
from tests.helpers import REPO

# a real Jupyter kernel and a script run: a minute; run by .ci/slow
pytestmark = pytest.mark.slow

PAGE = REPO / "docs" / "guides" / "python.md"
SECTION = "## Python API"


def as_code(block: str) -> str:
    """A block as the code it runs: a doctest's `>>>`/`...` lines without their prompts."""
    lines = block.splitlines()
    if not lines or not lines[0].startswith(">>>"):
        return block
    code = [line[4:] for line in lines if line.startswith((">>> ", "... "))]
    return "\n".join(code) + "\n"


def readme_blocks(section: str = SECTION) -> list[str]:
    """The ```python blocks of one section of the page (to the next heading), as code."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(section)
    ends = [text.find(mark, start + 1) for mark in ("\n## ", "\n### ")]
    end = min([e for e in ends if e != -1], default=len(text))
    return [as_code(b) for b in re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)]


def folder_with_examples(path: Path) -> Path:
    """A folder holding the repository's `examples/` (what the page's paths name), nothing else."""
    path.mkdir()
    (path / "examples").symlink_to(REPO / "examples")
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return folder_with_examples(tmp_path / "script")


def env_for(server: FakeOpenAIServer, workdir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TEST_SERVER": server.base_url,
        "OPENAI_API_KEY": "sk-test-not-a-key",
        "PYTHONPATH": str(REPO),
        "XDG_CACHE_HOME": str(workdir / "cache"),  # the verdict cache stays in the test's folder
    }


def test_the_section_shows_the_sync_and_the_async_form() -> None:
    sync, asynchronous, model = readme_blocks()
    assert "judge.grade(" in sync and "await judge.agrade(" in asynchronous
    assert "grade_file(" in model


def script_output(workdir: Path, server: FakeOpenAIServer) -> list[str]:
    sync, asynchronous, model = readme_blocks()
    script = "\n".join(
        [
            sync,
            "import asyncio",
            "async def _main():",
            textwrap.indent(asynchronous, "    "),
            "asyncio.run(_main())",
            model,
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=workdir,
        env=env_for(server, workdir),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_script_form_prints_one_record_twice(
    workdir: Path, openai_server: FakeOpenAIServer
) -> None:
    sync_line, async_line, summary_line = script_output(workdir, openai_server)
    assert sync_line == async_line
    assert sync_line.startswith("ok 0.0 {")  # the rules judge: 40 days is not supported
    assert openai_server.stats.requests > 0 and summary_line.startswith("43 ")


def test_a_jupyter_kernel_prints_the_same_record_as_the_script(
    workdir: Path, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    nbformat = pytest.importorskip("nbformat")  # dev extra: nbclient brings nbformat
    from nbclient import NotebookClient

    expected = script_output(workdir, openai_server)
    kernel_dir = folder_with_examples(workdir.parent / "kernel")
    for key, value in env_for(openai_server, kernel_dir).items():
        monkeypatch.setenv(key, value)  # the kernel inherits this process' environment
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(block) for block in readme_blocks()]
    )
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(kernel_dir)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, if one fails
    printed = [
        "".join(o["text"] for o in cell.outputs if o.get("name") == "stdout").rstrip("\n")
        for cell in notebook.cells
    ]
    assert printed == expected
