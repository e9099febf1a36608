"""Issue 33 items 6 and 8: where `[tool.judge]` / judge.toml may come from.

Before, the search climbed to `/` when there was no `.git` and read any file it met: a
judge.toml planted in a shared sticky folder (as `/tmp` is) silently redirected `base_url`,
and with it the key and the cases. Now the search never climbs into a folder anyone may
write to, and a file owned by someone else, or writable by others, is refused (exit 2,
saying why). A value nested thousands deep was a RecursionError traceback in every command.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from judge.cli import main

EVIL = 'model = "m"\nbase_url = "http://attacker.invalid/v1"\n'
OTHER_UID = 4242  # the tests run as root, so chown to another user works


def config_json(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["config", "--json"], env={}) == 0
    return json.loads(capsys.readouterr().out)


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(list(args) or ["config"], env={})
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


@pytest.mark.parametrize("mode", [0o1777, 0o777])
@pytest.mark.parametrize("owner", [OTHER_UID, None])
def test_a_config_planted_in_a_shared_folder_is_never_used(
    mode: int, owner: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A world-writable parent (sticky like /tmp, or not) is no project: the search stops
    below it, whoever owns the file planted there."""
    shared = tmp_path / "sticky"
    (shared / "work" / "deeper").mkdir(parents=True)
    planted = shared / "judge.toml"
    planted.write_text(EVIL)
    if owner is not None:
        os.chown(planted, owner, owner)
    shared.chmod(mode)
    for cwd in (shared / "work", shared / "work" / "deeper"):
        monkeypatch.chdir(cwd)
        data = config_json(capsys)
        assert data["file"] is None
        assert data["settings"]["base_url"]["value"] != "http://attacker.invalid/v1"  # type: ignore[index]


@pytest.mark.parametrize("name", ["judge.toml", "pyproject.toml"])
def test_a_parent_config_owned_by_another_user_is_refused_saying_why(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    parent = tmp_path / "srv"
    (parent / "a" / "b").mkdir(parents=True)
    text = EVIL if name == "judge.toml" else "[tool.judge]\n" + EVIL
    (parent / name).write_text(text)
    os.chown(parent / name, OTHER_UID, OTHER_UID)
    monkeypatch.chdir(parent / "a" / "b")
    err = refused(capsys)
    assert str(parent / name) in err and f"owned by uid {OTHER_UID}" in err
    monkeypatch.chdir(parent / "a")
    assert "refused as a project config" in refused(
        capsys, "grade", "c.jsonl", "--rubric", "faithfulness"
    )


@pytest.mark.parametrize(
    ("mode", "who"), [(0o666, "anyone"), (0o664, "its group"), (0o646, "anyone")]
)
def test_a_config_others_can_write_is_refused(
    mode: int, who: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    (tmp_path / ".git").mkdir()
    (tmp_path / "judge.toml").write_text(EVIL)
    (tmp_path / "judge.toml").chmod(mode)
    monkeypatch.chdir(tmp_path)
    err = refused(capsys)
    assert f"{who} can write to it" in err and "chmod go-w" in err
    (tmp_path / "judge.toml").chmod(0o644)  # the owner's own file, writable by it alone
    data = config_json(capsys)
    assert data["file"] == str(tmp_path / "judge.toml")
    assert data["settings"]["base_url"]["source"] == str(tmp_path / "judge.toml")  # type: ignore[index]


def test_the_search_stops_at_the_first_git_or_tool_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A foreign file above the project root is never even opened (no refusal either)."""
    (tmp_path / "judge.toml").write_text(EVIL)
    os.chown(tmp_path / "judge.toml", OTHER_UID, OTHER_UID)
    (tmp_path / "repo" / "src").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "src")
    assert config_json(capsys)["file"] is None
    (tmp_path / "repo" / ".git").rmdir()
    (tmp_path / "repo" / "pyproject.toml").write_text("[tool.judge]\nconcurrency = 3\n")
    data = config_json(capsys)
    assert data["file"] == str(tmp_path / "repo" / "pyproject.toml")
    assert data["settings"]["concurrency"]["value"] == 3  # type: ignore[index]


def nested(depth: int, inline_table: bool) -> str:
    if inline_table:
        return "{a = " * depth + "1" + " }" * depth
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize(
    ("name", "depth", "inline_table"),
    [
        ("pyproject.toml", 5000, False),
        ("pyproject.toml", 2000, True),
        ("judge.toml", 5000, False),
        ("judge.toml", 700, True),
    ],
)
def test_a_value_nested_thousands_deep_is_one_line_exit_2(
    name: str, depth: int, inline_table: bool, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    (tmp_path / ".git").mkdir()
    head = "[tool.judge]\n" if name == "pyproject.toml" else ""
    (tmp_path / name).write_text(f"{head}model = {nested(depth, inline_table)}\n")
    monkeypatch.chdir(tmp_path)
    for command in (["config"], ["rubrics"], ["grade", "c.jsonl", "--rubric", "faithfulness"]):
        err = refused(capsys, *command)
        assert str(tmp_path / name) in err and "nested too deeply" in err
