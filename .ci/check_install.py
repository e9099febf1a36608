"""Check what .ci/fresh-install produced with the wheel, from outside the repository.

    python .ci/check_install.py REPO RUN_DIR

RUN_DIR holds `version.txt` (`judge --version`), `rubrics.txt` (`judge rubrics`),
`show.txt` (`judge rubrics show faithfulness@1`) and `graded.jsonl` (the README's main job
on a copy of examples/cases.jsonl). Exits 1 naming every problem found.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ESSENTIAL_RUBRICS = {"faithfulness", "pairwise", "relevance"}


def read_lock(path: Path) -> dict[str, str]:
    lock = {}
    for line in path.read_text("utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            ref, digest = line.split()
            lock[ref] = digest
    return lock


def problems(repo: Path, run: Path) -> list[str]:
    found: list[str] = []
    lock = read_lock(repo / "rubrics" / "rubrics.lock")
    version = tomllib.loads((repo / "pyproject.toml").read_text("utf-8"))["project"]["version"]

    said = (run / "version.txt").read_text("utf-8").strip()
    if not said.startswith(f"judge {version} "):
        found.append(f"judge --version printed {said!r}, expected version {version}")

    listed = {}
    for row in (run / "rubrics.txt").read_text("utf-8").splitlines()[1:]:
        rubric_id, rubric_version, _kind, short = row.split()
        listed[f"{rubric_id}@{rubric_version}"] = short
    if set(listed) != set(lock):
        found.append(f"judge rubrics listed {sorted(listed)}, rubrics.lock releases {sorted(lock)}")
    if not {ref.split("@")[0] for ref in listed} >= ESSENTIAL_RUBRICS:
        found.append(f"judge rubrics lacks one of {sorted(ESSENTIAL_RUBRICS)}")
    for ref, short in listed.items():
        if ref not in lock or not lock[ref].startswith(short):
            found.append(f"judge rubrics: {ref} {short} does not match rubrics.lock")

    shown = (run / "show.txt").read_text("utf-8").splitlines()[1]
    if "site-packages" not in shown:
        found.append(f"the rubric was not read from the installed package: {shown}")

    records = [json.loads(line) for line in (run / "graded.jsonl").read_text("utf-8").splitlines()]
    cases = (repo / "examples" / "cases.jsonl").read_text("utf-8").splitlines()
    if len(records) != len(cases) or len(records) != 43:
        found.append(f"{len(records)} records for {len(cases)} cases, expected 43")
    for record in records:
        ref = f"{record.get('rubric')}@{record.get('rubric_version')}"
        if lock.get(ref) != record.get("rubric_sha256"):
            found.append(f"record {record.get('id')}: {ref} sha256 does not match rubrics.lock")
    return found


def main(argv: list[str]) -> int:
    repo, run = Path(argv[0]), Path(argv[1])
    found = problems(repo, run)
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    if not found:
        print(
            (run / "version.txt").read_text("utf-8").strip()
            + f"; {len(read_lock(repo / 'rubrics' / 'rubrics.lock'))} rubrics as locked; "
            + f"{len((run / 'graded.jsonl').read_text('utf-8').splitlines())} records, "
            "each with the locked rubric id, version and sha256"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
