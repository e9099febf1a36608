"""The wheel carries the released rubrics: what pyproject.toml ships, and where the package
looks for it. (`.ci/run` builds the real wheel and grades with it from outside the tree.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from judge import rubric as rubric_module
from judge.rubric import LOCK_NAME, list_rubrics, packaged_rubrics_dir, parse_ref, read_lock
from tests.helpers import REPO

SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]


def shipped_files() -> set[Path]:
    """Files under rubrics/ that the package-data patterns put into the wheel."""
    folder = REPO / SETUPTOOLS["package-dir"]["judge._rubrics"]
    patterns = SETUPTOOLS["package-data"]["judge._rubrics"]
    return {path.relative_to(folder) for pattern in patterns for path in folder.glob(pattern)}


def test_wheel_maps_the_data_package_onto_the_top_level_rubrics_folder() -> None:
    assert "judge._rubrics" in SETUPTOOLS["packages"]
    assert SETUPTOOLS["package-dir"] == {"judge._rubrics": "rubrics"}


def test_every_package_of_the_source_tree_ships() -> None:
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for top in ("judge", "calibration")
        for init in (REPO / top).rglob("__init__.py")
    }
    assert found, "no package found"
    assert found <= set(SETUPTOOLS["packages"]), sorted(found - set(SETUPTOOLS["packages"]))


def test_every_released_rubric_and_the_lock_ship_in_the_wheel() -> None:
    released = set()
    for ref in read_lock(REPO / "rubrics"):
        rubric_id, version = parse_ref(ref)
        released.add(Path(rubric_id, f"v{version}.yaml"))
    assert released, "the lock lists no rubric"
    assert released | {Path(LOCK_NAME)} <= shipped_files()


def test_every_rubric_file_in_the_folder_ships() -> None:
    on_disk = {Path(r.path).relative_to(REPO / "rubrics") for r in list_rubrics(REPO / "rubrics")}
    assert on_disk <= shipped_files()


def test_installed_copy_is_found_through_importlib_resources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = tmp_path / "site-packages" / "judge"
    (installed / "_rubrics").mkdir(parents=True)
    monkeypatch.setattr(rubric_module.resources, "files", lambda package: installed)
    assert packaged_rubrics_dir() == installed / "_rubrics"


def test_a_source_tree_reads_its_own_rubrics_folder() -> None:
    # this suite runs from the source tree (editable or PYTHONPATH), where nothing is copied
    assert packaged_rubrics_dir() == REPO / "rubrics"


def test_the_license_file_matches_the_metadata() -> None:
    """Issue 23 item 6: pyproject says MIT; the LICENSE file (shipped by setuptools'
    default license-files) is the MIT text."""
    import tomllib

    from tests.helpers import REPO

    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == "MIT"
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Permission is hereby granted" in text
