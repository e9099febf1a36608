"""Rubrics users write themselves, end to end: `judge rubrics new` and `lock` in a folder
outside the repository, then a scale, a labels and a criteria rubric each graded through
the loopback test server with full provenance, listed, calibrated against human labels,
probed for repeatability and verbosity, and refused once a locked file is edited."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judge.cli import main
from judge.kinds import get_kind
from judge.rubric import RubricLibrary
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO, read_jsonl

# every user rubric kind through grade, probe and calibrate (.ci/slow runs it)
pytestmark = pytest.mark.slow

KINDS = {"tone": "scale", "policy": "labels", "quality": "criteria"}
MODEL = "judge-test-2024-01-01"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A user's rubric folder with one rubric of each generic kind, written by
    `judge rubrics new` and released by `judge rubrics lock`."""
    mine = tmp_path / "my-rubrics"
    for rubric_id, kind in KINDS.items():
        args = ["rubrics", "new", rubric_id, "--kind", kind, "--rubrics-dir", str(mine)]
        assert main(args, env={}) == 0
    assert main(["rubrics", "lock", "--rubrics-dir", str(mine)], env={}) == 0
    return mine


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    lines = (REPO / "examples" / "cases.jsonl").read_text("utf-8").splitlines()[:8]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def model_env(server: FakeOpenAIServer, folder: Path) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "JUDGE_MODEL": MODEL,
        "JUDGE_RUBRICS_DIR": str(folder),
    }


def test_new_writes_a_commented_file_that_loads_and_lock_releases_it(folder: Path) -> None:
    library = RubricLibrary([folder])
    for rubric_id, kind in KINDS.items():
        text = (folder / rubric_id / "v1.yaml").read_text("utf-8")
        assert text.startswith("# A `") and f"kind: {kind}" in text
        assert library.load(rubric_id).kind == kind
    lock = (folder / "rubrics.lock").read_text("utf-8")
    assert all(f"{rubric_id}@1 " in lock for rubric_id in KINDS)
    assert main(["rubrics", "new", "tone", "--kind", "scale", "--rubrics-dir", str(folder)]) == 2
    assert (
        main(["rubrics", "new", "faithfulness", "--kind", "scale", "--rubrics-dir", str(folder)])
        == 2
    )


def test_user_rubrics_are_listed_with_their_folder(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rubrics", "--rubrics-dir", str(folder)], env={}) == 0
    out = capsys.readouterr().out
    for rubric_id, kind in KINDS.items():
        line = next(x for x in out.splitlines() if x.startswith(f"{rubric_id} "))
        assert kind in line and str(folder) in line
    assert "faithfulness" in out  # the built-in rubrics stay


@pytest.mark.parametrize("rubric_id", sorted(KINDS))
def test_each_generic_kind_grades_through_the_server_with_provenance(
    openai_server: FakeOpenAIServer, folder: Path, cases: Path, tmp_path: Path, rubric_id: str
) -> None:
    out = tmp_path / f"{rubric_id}.jsonl"
    args = ["grade", str(cases), "--rubric", rubric_id, "-o", str(out), "--no-cache"]
    assert main(args, env=model_env(openai_server, folder)) == 0
    rubric = RubricLibrary([folder]).load(rubric_id)
    labels = {c.name for c in get_kind(KINDS[rubric_id]).choices(rubric)}
    records = read_jsonl(out)
    assert len(records) == 8 and openai_server.stats.requests == 8
    for record in records:
        assert record["status"] == "ok", record
        assert (record["rubric"], record["rubric_version"]) == (rubric_id, 1)
        assert record["rubric_sha256"] == rubric.sha256
        assert record["judge"]["model"] == MODEL
        assert record["judge"]["system_fingerprint"] and record["judge"]["output_mode"]
        assert 0.0 <= record["score"] <= 1.0 and record["label"] in labels
    sent = openai_server.stats.bodies[0]["response_format"]["json_schema"]
    assert sent["name"] == rubric.schema_name and sent["strict"] is True


@pytest.mark.parametrize("rubric_id", sorted(KINDS))
def test_generic_kinds_calibrate_against_human_labels(
    openai_server: FakeOpenAIServer, folder: Path, cases: Path, tmp_path: Path, rubric_id: str
) -> None:
    out = tmp_path / "graded.jsonl"
    env = model_env(openai_server, folder)
    assert main(["grade", str(cases), "--rubric", rubric_id, "-o", str(out)], env=env) == 0
    records = read_jsonl(out)
    choices = [
        c.name for c in get_kind(KINDS[rubric_id]).choices(RubricLibrary([folder]).load(rubric_id))
    ]
    human = tmp_path / "human.csv"
    with human.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "label"])
        for i, record in enumerate(records):  # people disagree on every third case
            other = choices[(choices.index(record["label"]) + 1) % len(choices)]
            writer.writerow([record["id"], other if i % 3 == 0 else record["label"]])
    report = tmp_path / "report"
    assert main(["calibrate", str(out), str(human), "-o", str(report)], env={}) == 0
    result = json.loads((report / "calibration.json").read_text("utf-8"))
    assert result["n"] == 8 and result["observed_agreement"] == pytest.approx(5 / 8)


@pytest.mark.parametrize("probe", ["repeat", "verbosity"])
@pytest.mark.parametrize("rubric_id", sorted(KINDS))
def test_generic_kinds_run_the_repeat_and_verbosity_probes(
    openai_server: FakeOpenAIServer,
    folder: Path,
    cases: Path,
    tmp_path: Path,
    rubric_id: str,
    probe: str,
) -> None:
    out = tmp_path / f"{probe}.json"
    args = ["probe", probe, str(cases), "--rubric", rubric_id, "-o", str(out)]
    args += ["--repeats", "2"] if probe == "repeat" else []
    assert main(args, env=model_env(openai_server, folder)) == 0
    report = json.loads(out.read_text("utf-8"))
    assert report["probe"] == probe and report["rubric"] == f"{rubric_id}@1"
    assert report["status"].get("ok", 0) > 0


def test_an_edited_locked_rubric_is_refused_with_the_fix(
    folder: Path, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = folder / "tone" / "v1.yaml"
    path.write_text(path.read_text("utf-8").replace("Excellent", "Superb"), "utf-8")
    args = ["grade", str(cases), "--rubric", "tone", "-o", str(tmp_path / "o.jsonl")]
    assert main([*args, "--rubrics-dir", str(folder)], env={}) == 2
    err = capsys.readouterr().err
    assert "tone/v1.yaml" in err and "changed since it was locked" in err
    assert "next version file" in err
    assert main(["rubrics", "verify", "--rubrics-dir", str(folder)], env={}) == 2
