"""The docs' examples as tests (Sybil): every ```console and ```python block of docs/*.md.

A ```console block is commands (`$ ` lines; a line ending in `\\` continues on the next)
each followed by the output it prints, stdout and stderr together. Each command runs with
bash in the page's scratch folder (a copy of the repository's examples/, and its tests/data), one folder per
page, so a page's later blocks see what its earlier ones wrote. The printed output must
equal the shown one, every character, after the substitutions in NORMALISE (what varies
from run to run: a port, a temporary folder, a duration). A shown line `...` stands for
any number of lines (output the page leaves out); nothing else is a wildcard. A command
that exits non-zero fails the example unless its block shows the code (`; echo "exit $?"`).

`$TEST_SERVER` is the URL of a loopback OpenAI-compatible test server started for the page
(`python -m judge.testserver`), for the pages that show a model judge without a key.

A ```python block runs in the page's namespace, in the same folder; a `>>>` block is a
doctest whose shown output must match. `<!-- skip: next -->` before a block skips it
(Sybil's own marker), for the few that cannot run here; each says why beside it.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sybil import Example, Sybil
from sybil.example import SybilFailure
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 300

# What varies between runs, made the same in the printed and the shown output. Each is
# named for what it hides; add one only for output that truly varies.
NORMALISE: list[tuple[str, re.Pattern[str], str]] = [
    ("loopback port", re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    ("access token", re.compile(r"token=[A-Za-z0-9_-]+"), "token=TOKEN"),
    ("duration", re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b(?= |,|\)|$)", re.M), "N s"),
    # where the clone is (a rubric's file): the same page in any checkout
    ("the repository's folder", re.compile(re.escape(str(REPO)) + r"(?=/)"), "<repository>"),
]

_SCRUBBED_ENV = ("OPENAI_", "JUDGE_", "AZURE_OPENAI_", "OTEL_", "PHOENIX_")


_MATPLOTLIB = Path(tempfile.gettempdir()) / f"judge-docs-matplotlib-{os.getuid()}"


def matplotlib_config() -> str:
    """One matplotlib config folder for every page, its font cache built once up front: a
    command that builds it prints a warning that is no part of its output."""
    if not (_MATPLOTLIB / "ready").exists():
        _MATPLOTLIB.mkdir(exist_ok=True)
        env = {**os.environ, "MPLCONFIGDIR": str(_MATPLOTLIB)}
        subprocess.run(
            [sys.executable, "-c", "import matplotlib.font_manager"],
            env=env,
            check=True,
            capture_output=True,
        )
        (_MATPLOTLIB / "ready").touch()
    return str(_MATPLOTLIB)


class Page:
    """One page's scratch folder, environment and test server."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="judge-docs-"))
        self.work = self.folder / "work"
        shutil.copytree(REPO / "examples", self.work / "examples")
        (self.work / "tests").mkdir()  # the vendored data sets, read only
        (self.work / "tests" / "data").symlink_to(REPO / "tests" / "data")
        bin_dir = self.folder / "bin"
        bin_dir.mkdir()
        for name, module in (("judge", "judge.cli"), ("pytest", "pytest")):
            shim = bin_dir / name
            shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n')
            shim.chmod(0o755)
        (bin_dir / "python").symlink_to(sys.executable)
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_ENV)}
        env.update(
            PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
            PYTHONPATH=str(REPO),
            PYTHONUNBUFFERED="1",  # stdout and stderr interleave as on a terminal
            PYTHONHASHSEED="0",
            COLUMNS="100",
            NO_COLOR="1",
            TERM="dumb",
            MPLBACKEND="Agg",
            MPLCONFIGDIR=matplotlib_config(),
            XDG_CACHE_HOME=str(self.folder / "cache"),
            XDG_CONFIG_HOME=str(self.folder / "config"),
        )
        env.pop("PYTEST_ADDOPTS", None)
        self.env = env
        self._server: Any = None

    def server_url(self) -> str:
        if self._server is None:
            from judge.testing import FakeOpenAIServer

            self._server = FakeOpenAIServer().__enter__()
            self.env["TEST_SERVER"] = self._server.base_url
            self.env["OPENAI_API_KEY"] = "sk-test-not-a-key"  # the test server takes any
        return str(self._server.base_url)

    def close(self) -> None:
        if self._server is not None:
            self._server.__exit__(None, None, None)
        shutil.rmtree(self.folder, ignore_errors=True)

    @contextmanager
    def inside(self) -> Iterator[None]:
        """The process in the page's folder and environment (for Python blocks)."""
        before_dir, before_env = os.getcwd(), dict(os.environ)
        os.chdir(self.work)
        os.environ.clear()
        os.environ.update(self.env)
        try:
            yield
        finally:
            os.chdir(before_dir)
            os.environ.clear()
            os.environ.update(before_env)


def split_console(block: str) -> list[tuple[str, list[str]]]:
    """[(command, shown output lines)] of a console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = block.rstrip("\n").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("$ "):
            raise ValueError(f"console block: output before any command: {line!r}")
        command = line[2:]
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command += "\n" + lines[index]
        output: list[str] = []
        while index + 1 < len(lines) and not lines[index + 1].startswith("$ "):
            index += 1
            output.append(lines[index])
        steps.append((command, output))
        index += 1
    return steps


def normalise(text: str) -> list[str]:
    for _, pattern, replacement in NORMALISE:
        text = pattern.sub(replacement, text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether the printed lines are the shown ones, a `...` line standing for any lines."""
    parts = [
        r"(?:[^\n]*\n)*?" if line.strip() == "..." else re.escape(line) + r"\n" for line in shown
    ]
    return re.fullmatch("".join(parts), "".join(line + "\n" for line in printed)) is not None


def run_command(page: Page, command: str) -> subprocess.CompletedProcess[str]:
    if "$TEST_SERVER" in command:
        page.server_url()
    return subprocess.run(
        ["bash", "-c", command],
        cwd=page.work,
        env=page.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )


def evaluate_console(example: Example) -> str | None:
    page: Page = example.namespace["page"]
    for command, shown_lines in split_console(example.parsed):
        done = run_command(page, command)
        shown = normalise("\n".join(shown_lines))
        printed = normalise(done.stdout)
        if done.returncode != 0:
            return f"$ {command}\nexited {done.returncode}; it printed:\n{done.stdout}"
        if not matches(shown, printed):
            diff = difflib.unified_diff(shown, printed, "shown", "printed", lineterm="")
            return f"$ {command}\n" + "\n".join(diff)
    return None


def setup(namespace: dict[str, Any]) -> None:
    namespace["page"] = Page()


def teardown(namespace: dict[str, Any]) -> None:
    namespace["page"].close()


def _python_in_page(evaluator: Any) -> Any:
    def evaluate(example: Example) -> Any:
        page: Page = example.namespace["page"]
        if "TEST_SERVER" in str(getattr(example.parsed, "source", example.parsed)):
            page.server_url()
        with page.inside():
            return evaluator(example)

    return evaluate


class PythonInPage:
    """Sybil's Python parser (code blocks and `>>>` doctests), each run in the page's folder."""

    def __init__(self) -> None:
        self.parser = PythonCodeBlockParser()

    def __call__(self, document: Any) -> Iterator[Any]:
        for region in self.parser(document):
            region.evaluator = _python_in_page(region.evaluator)
            yield region


def make_sybil(**options: Any) -> Sybil:
    return Sybil(
        parsers=[
            CodeBlockParser(language="console", evaluator=evaluate_console),
            PythonInPage(),
            SkipParser(),
        ],
        patterns=["*.md"],
        setup=setup,
        teardown=teardown,
        **options,
    )


def page_failures(path: Path) -> list[str]:
    """Every example of one page run in order, as `python -m pytest docs` runs them: what
    each failing one reported (empty when all pass). For pages outside docs/ (README.md)."""
    document = make_sybil().parse(path)
    setup(document.namespace)
    try:
        found = []
        for example in document:
            try:
                example.evaluate()
            except SybilFailure as failure:
                found.append(str(failure))
        return found
    finally:
        teardown(document.namespace)
