"""Issue 51, item 7: a key given twice in a rubric file is bad input (exit 2, naming the file,
the line and the key), where PyYAML alone keeps the last silently; and the starting files
of `judge rubrics new` have no help line that starts like a key, so the documented `sed`
that uncomments a default cannot leave a key twice."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from judge.cli import main
from judge.errors import RubricError
from judge.kinds import get_kind, kind_names
from judge.rubric import read_rubric_file
from tests.helpers import REPO

TONE = (REPO / "examples" / "rubrics" / "tone" / "v1.yaml").read_text("utf-8")


def write_tone(folder: Path, text: str) -> Path:
    path = folder / "tone" / "v1.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("version: 1\n", "version: 1\nkind: scale\n", "kind"),  # top level
        ("{min: 1, max: 5, pass_at: 4}", "{min: 1, max: 5, min: 2, pass_at: 4}", "min"),  # nested
    ],
)
def test_a_key_given_twice_is_refused_naming_file_line_and_key(
    tmp_path: Path, old: str, new: str, key: str
) -> None:
    path = write_tone(tmp_path, TONE.replace(old, new, 1))
    with pytest.raises(RubricError, match=rf"v1\.yaml: line \d+: duplicate key '{key}'"):
        read_rubric_file(path)


def test_grading_with_a_duplicated_key_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tone(tmp_path / "mine", TONE.replace("version: 1\n", "version: 1\nkind: scale\n", 1))
    args = ["grade", str(REPO / "examples" / "cases.jsonl"), "--rubric", "tone"]
    code = main([*args, "--rubrics-dir", str(tmp_path / "mine"), "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert "tone/v1.yaml: line 5: duplicate key 'kind' (first on line 4)" in err
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("kind", kind_names())
def test_no_help_line_of_a_starting_file_starts_like_a_key(kind: str) -> None:
    """Each `# KEY:` line of a template is the one commented default of KEY: help text
    about a key says `the modes of KEY: ...`, so `s/^# KEY: .../` finds one line."""
    text = get_kind(kind).template("demo")
    commented = re.findall(r"^# ([a-z_]+):", text, flags=re.M)
    assert len(commented) == len(set(commented)), commented
    keys = set(re.findall(r"^([a-z_]+):", text, flags=re.M))
    assert not keys & set(commented), keys & set(commented)


def test_the_documented_sed_gives_a_rubric_with_each_key_once(tmp_path: Path) -> None:
    """docs/guides/conversations.md: `judge rubrics new calls --kind trajectory`, then the
    sed that sets both modes; the file loads, with the modes the sed asked for."""
    assert main(["rubrics", "new", "calls", "--kind", "trajectory", "--rubrics-dir",
                 str(tmp_path)]) == 0  # fmt: skip
    path = tmp_path / "calls" / "v1.yaml"
    sed = "s/^# match: superset/match: unordered/; s/^# arguments: exact/arguments: subset/"
    subprocess.run(["sed", "-i", sed, str(path)], check=True)
    rubric = read_rubric_file(path)
    assert (rubric.spec.match, rubric.spec.arguments) == ("unordered", "subset")
