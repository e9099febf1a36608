"""The docs' example harness (docs/_examples.py) fails when a shown output is not what the
command prints: one changed digit of a real page's block is enough."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _examples import REPO, matches, normalise, page_failures, split_console

PAGE = REPO / "docs" / "guides" / "rubrics.md"


def first_console_block(page: Path) -> str:
    """The page's first ```console block, fence included."""
    found = re.search(r"^```console\n.*?^```\n", page.read_text("utf-8"), re.S | re.M)
    assert found, f"{page} has no console block"
    return found.group(0)


def change_one_digit(block: str) -> str:
    """The block with the first digit of its shown output (not its commands) changed."""
    lines = block.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith(("$ ", "```")):
            continue
        digit = re.search(r"\d", line)
        if digit:
            new = str((int(digit.group()) + 1) % 10)
            lines[index] = line[: digit.start()] + new + line[digit.end() :]
            return "".join(lines)
    raise AssertionError("no digit in the block's shown output")


def test_a_real_block_passes_as_shown_and_fails_with_one_digit_changed(tmp_path: Path) -> None:
    block = first_console_block(PAGE)
    shown = tmp_path / "shown.md"
    shown.write_text(f"# shown\n\n{block}", "utf-8")
    changed = tmp_path / "changed.md"
    changed.write_text(f"# changed\n\n{change_one_digit(block)}", "utf-8")
    assert page_failures(shown) == []
    (failure,) = page_failures(changed)
    assert "--- shown" in failure and "+++ printed" in failure


def test_a_python_example_fails_with_one_digit_changed(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\n>>> print(round(2 / 3, 4))\n0.6667\n```\n", "utf-8")
    assert page_failures(page) == []
    page.write_text("```python\n>>> print(round(2 / 3, 4))\n0.6668\n```\n", "utf-8")
    assert len(page_failures(page)) == 1


def test_a_failing_command_fails_unless_its_code_is_shown(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```console\n$ judge grade missing.jsonl --rubric faithfulness -o x.jsonl\n```\n"
    )
    (failure,) = page_failures(page)
    assert "exited 2" in failure


def test_an_ellipsis_line_stands_for_lines_and_nothing_else() -> None:
    assert matches(["a 1", "...", "z 9"], ["a 1", "b 2", "c 3", "z 9"])
    assert matches(["a 1", "...", "z 9"], ["a 1", "z 9"])
    assert not matches(["a 1", "...", "z 9"], ["a 1", "b 2", "z 8"])
    assert not matches(["a ... 1"], ["a 22 1"])  # only a whole `...` line is a wildcard


def test_only_the_named_variable_parts_are_normalised() -> None:
    printed = "open http://127.0.0.1:40431/?token=abc-D_9 in 0.42 s\nkappa 0.702"
    assert normalise(printed) == ["open http://127.0.0.1:PORT/?token=TOKEN in N s", "kappa 0.702"]


def test_console_blocks_split_into_commands_and_their_output() -> None:
    block = "$ judge a \\\n    --flag\nout 1\nout 2\n$ judge b\n"
    assert split_console(block) == [("judge a \\\n    --flag", ["out 1", "out 2"]), ("judge b", [])]
    with pytest.raises(ValueError, match="output before any command"):
        split_console("stray\n$ judge a\n")


def test_the_readme_tour_prints_what_it_shows() -> None:
    assert page_failures(REPO / "README.md") == []


def test_the_cli_reference_is_generated_from_every_parser() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "cli_reference", REPO / "docs" / "_hooks" / "cli_reference.py"
    )
    assert spec and spec.loader
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    from judge.cli import build_parser

    page = hook.reference_text()
    for prog, parser in hook.command_parsers(build_parser(), "judge"):
        assert f"## `{prog}`" in page
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in page, f"{prog} {flag}"
    assert "## `judge grade`" in page and "--human-labels" in page
