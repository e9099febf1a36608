"""`judge align`: the next version of a rubric, with few-shot examples from labelled
disagreements on the dev split (calibration.pairs.teaching_cases picks them; this writes the rubric).

Where the new version goes: a built-in rubric is released and immutable, and its folder is
not the user's, so `faithfulness` becomes `faithfulness-aligned` v1 in the user's rubric
folder (the first `--rubrics-dir`), or that id's next version when it exists already; a
user's own rubric gets its next version in its own folder. The file is written unlocked:
the user reviews it, grades the test split with it, and locks it (`judge rubrics lock`)
only once `judge gate` passes. An existing file is never overwritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from calibration.io.rows import read_label_rows
from calibration.pairs.teaching_cases import AlignmentSet, pick_examples
from judge.engine.inputs import iter_cases, validate_file
from judge.errors import RubricError, UsageError
from judge.rubric import Rubric, RubricExample, RubricLibrary, available_versions, read_rubric_file

__all__ = [
    "ALIGNED_SUFFIX",
    "Target",
    "aligned_target",
    "choose_examples",
    "write_aligned",
    "write_test_labels",
]

ALIGNED_SUFFIX = "-aligned"
NOTE_FIELDS = ("note", "annotator_note", "rationale", "comment")
MAX_NOTE = 300


@dataclass(frozen=True)
class Target:
    """Where the aligned rubric is written: folder, id and version."""

    folder: Path
    rubric_id: str
    version: int

    @property
    def path(self) -> Path:
        return self.folder / self.rubric_id / f"v{self.version}.yaml"

    @property
    def ref(self) -> str:
        return f"{self.rubric_id}@{self.version}"


def aligned_target(rubric: Rubric, library: RubricLibrary, user_dirs: Sequence[Path]) -> Target:
    """The next version to write (see the module docstring); UsageError when a built-in
    rubric is aligned with no user folder to write into."""
    folder = library.folder_of(rubric.id)
    if folder is not None and folder != library.builtin:
        return Target(folder, rubric.id, available_versions(rubric.id, folder)[-1] + 1)
    new_id = rubric.id + ALIGNED_SUFFIX
    existing = library.folder_of(new_id)
    if existing is not None and existing != library.builtin:
        return Target(existing, new_id, available_versions(new_id, existing)[-1] + 1)
    if not user_dirs:
        raise UsageError(
            f"rubric {rubric.id!r} is built in: released rubrics are immutable, so the aligned "
            f"one is written as {new_id!r} v1 into your rubric folder: give --rubrics-dir DIR"
        )
    return Target(Path(user_dirs[0]), new_id, 1)


def choose_examples(
    rubric: Rubric,
    aligned: AlignmentSet,
    cases: Path,
    *,
    n: int,
    seed: int,
) -> list[RubricExample]:
    """Up to `n` examples from the dev split's disagreements, each with the case's inputs
    as the judge sees them, the human label and a short note."""
    picked = pick_examples(aligned.human, aligned.judge, aligned.dev, n=n, seed=seed)
    wanted = {aligned.ids[i]: i for i in picked}
    payloads = _payloads(cases, rubric, wanted)
    missing = sorted(set(wanted) - set(payloads))
    if missing:
        raise UsageError(
            f"--cases {cases}: no case with the id(s) {', '.join(missing[:10])}: give the cases "
            "file the records were graded from"
        )
    return [
        RubricExample(
            id=aligned.ids[i],
            inputs=payloads[aligned.ids[i]],
            label=aligned.human[i],
            note=_note(aligned.fields[i], aligned.judge[i], rubric),
        )
        for i in picked
    ]


def _payloads(cases: Path, rubric: Rubric, wanted: Mapping[str, int]) -> dict[str, Any]:
    validate_file(cases, rubric)  # InputError naming the line, as `judge grade` says it
    found: dict[str, Any] = {}
    for case in iter_cases(cases):
        if case.id in wanted:
            found[case.id] = rubric.payload(case)
    return found


def _note(fields: Mapping[str, Any], judge_label: str, rubric: Rubric) -> str:
    given = next((str(fields[k]).strip() for k in NOTE_FIELDS if fields.get(k)), "")
    given = given[:MAX_NOTE].rstrip()
    said = f"A judge with rubric {rubric.ref} said {judge_label!r}."
    return f"{given} ({said})" if given else said


# ---- the file ----------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Multi-line text as a literal block (`|`), as rubric files are written by hand."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def aligned_text(
    rubric: Rubric, target: Target, examples: Iterable[RubricExample], provenance: str
) -> str:
    """The new rubric file: the source file's keys, the new id and version, `examples`;
    a comment header says where it came from and what to do with it."""
    source = Path(rubric.path)
    data = yaml.safe_load(source.read_text("utf-8"))
    data["id"], data["version"] = target.rubric_id, target.version
    data["examples"] = [e.model_dump() for e in examples]
    header = "".join(f"# {line}\n" for line in provenance.splitlines())
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def write_aligned(text: str, target: Target) -> Rubric:
    """Write the new version (never over an existing file) and read it back, validated;
    a file that does not validate is removed and RubricError raised."""
    target.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise UsageError(f"{target.path} exists already: versions are never overwritten") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    try:
        return read_rubric_file(target.path)
    except RubricError:
        target.path.unlink()
        raise


def write_test_labels(labels: Path, test_ids: Iterable[str], out: Path) -> int:
    """The human label rows of the test split, as JSONL (what `judge gate --labels` reads);
    returns how many rows."""
    keep = set(test_ids)
    rows = [row for _, row in read_label_rows(labels) if str(row.get("id", "")).strip() in keep]
    out.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    out.write_text(text, "utf-8")
    return len(rows)
