"""`~` in service.yaml's paths is the home folder (issue 23 item 6): `cache_dir:
~/.cache/llm-judge` used to create a folder literally named `~` in the working folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.service.config import load_service_config


def test_every_path_of_service_yaml_expands_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    config_file = tmp_path / "service.yaml"
    config_file.write_text(
        "data_dir: ~/judge-service\ncache_dir: ~/.cache/llm-judge\nrubrics_dirs: [~/rubrics]\n"
    )
    config = load_service_config(config_file, {"JUDGE_RUBRICS_DIR": "~/more"})
    assert config.data_dir == home / "judge-service"
    assert config.cache_dir == home / ".cache/llm-judge"
    assert config.rubrics_dirs == [home / "rubrics", home / "more"]
    assert config.judge_config(config.default_name()).cache_dir == home / ".cache/llm-judge"


def test_a_path_without_a_tilde_is_left_as_written(tmp_path: Path) -> None:
    config_file = tmp_path / "service.toml"
    config_file.write_text('data_dir = "jobs"\n')
    assert load_service_config(config_file, {}).data_dir == Path("jobs")
