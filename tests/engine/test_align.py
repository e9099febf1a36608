"""`judge align` (issue 15 item 8): the mechanics of aligning a judge from labels.

With no model here these tests prove the mechanics only: the examples come from the dev
split alone (never a test-split id, over many seeds), the split is `judge calibrate
--split`'s, the version bump, the lock left alone, the rendered prompt (a golden file),
and the exit codes on bad input. Whether the aligned rubric makes a model judge agree
better with people only a real model can show, through `judge gate` on the test split.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration import calibrate
from calibration.pairs.teaching_cases import alignment_set, pick_examples
from judge import Judge, JudgeConfig
from judge.cli import main
from judge.kinds._base import EXAMPLES_HEADING, examples_text
from judge.rubric import (
    DEFAULT_RUBRICS_DIR,
    RubricLibrary,
    load_rubric,
    read_lock,
    read_rubric_file,
    verify_lock,
    write_lock,
)
from judge.schemas import Case
from tests.helpers import REPO, case

EXAMPLES = REPO / "examples"
CASES = EXAMPLES / "cases.jsonl"
LABELS = EXAMPLES / "human_labels.csv"
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("align") / "graded.jsonl"
    Judge(JudgeConfig(use_cache=False)).grade_file(CASES, out, "faithfulness")
    return out


def _align(tmp_path: Path, records: Path, *extra: str, rubric: str = "faithfulness") -> int:
    argv = ["align", "--rubric", rubric, "--labels", str(LABELS), "--records", str(records)]
    argv += ["--cases", str(CASES), "--test-labels", str(tmp_path / "test.jsonl"), *extra]
    return main(argv, env={})


def _examples(path: Path) -> list[str]:
    return [e["id"] for e in yaml.safe_load(path.read_text())["examples"]]


# ---- the split and the pick ----------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), fraction=st.sampled_from([0.2, 0.3, 0.5]))
def test_no_test_id_is_ever_an_example_and_the_split_is_calibrates(
    records: Path, seed: int, fraction: float
) -> None:
    aligned = alignment_set(records, LABELS, test_fraction=fraction, seed=seed)
    report = calibrate(records, LABELS, test_fraction=fraction, seed=seed, n_bootstrap=0)
    test_ids = [aligned.ids[i] for i in aligned.test]
    assert test_ids == report["split"]["test_ids"]
    assert [aligned.ids[i] for i in aligned.dev] == report["split"]["dev_ids"]
    picked = pick_examples(aligned.human, aligned.judge, aligned.dev, n=8, seed=seed)
    assert not {aligned.ids[i] for i in picked} & set(test_ids)
    assert all(aligned.human[i] != aligned.judge[i] for i in picked)


@settings(max_examples=200, deadline=None)
@given(
    labels=st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), max_size=40),
    dev_mask=st.lists(st.booleans(), min_size=40, max_size=40),
    n=st.integers(1, 10),
    seed=st.integers(0, 2**31),
)
def test_the_pick_keeps_to_dev_disagreements_and_spreads_over_labels(
    labels: list[tuple[str, str]], dev_mask: list[bool], n: int, seed: int
) -> None:
    human, judge = [h for h, _ in labels], [j for _, j in labels]
    dev = [i for i in range(len(labels)) if dev_mask[i]]
    picked = pick_examples(human, judge, dev, n=n, seed=seed)
    wrong = [i for i in dev if human[i] != judge[i]]
    assert set(picked) <= set(wrong) and len(set(picked)) == len(picked)
    assert len(picked) == min(n, len(wrong))
    assert picked == pick_examples(human, judge, dev, n=n, seed=seed)
    # round robin: no human label gets a second example before every label has one
    kinds = {human[i] for i in wrong}
    if len(picked) >= len(kinds):
        assert {human[i] for i in picked[: len(kinds)]} == kinds


def test_cli_examples_stay_in_dev_over_seeds(tmp_path: Path, records: Path) -> None:
    for seed in range(6):
        folder = tmp_path / f"seed{seed}"
        code = _align(folder, records, "--split", "test=0.3", "--seed", str(seed),
                      "--rubrics-dir", str(folder / "rubrics"), "--examples", "10")  # fmt: skip
        assert code == 0
        report = calibrate(records, LABELS, test_fraction=0.3, seed=seed, n_bootstrap=0)
        ids = _examples(folder / "rubrics" / "faithfulness-aligned" / "v1.yaml")
        assert ids and not set(ids) & set(report["split"]["test_ids"])
        assert set(ids) <= set(report["split"]["dev_ids"])
        test_rows = [json.loads(line) for line in (folder / "test.jsonl").read_text().splitlines()]
        assert sorted(r["id"] for r in test_rows) == sorted(report["split"]["test_ids"])


def test_dev_ids_from_a_calibrate_report(tmp_path: Path, records: Path) -> None:
    assert main(["calibrate", str(records), str(LABELS), "--split", "test=0.4", "--seed", "7",
                 "--bootstrap", "0", "-o", str(tmp_path / "report")], env={}) == 0  # fmt: skip
    report = json.loads((tmp_path / "report" / "calibration.json").read_text())
    code = _align(tmp_path, records, "--dev-ids", str(tmp_path / "report" / "calibration.json"),
                  "--rubrics-dir", str(tmp_path / "rubrics"))  # fmt: skip
    assert code == 0
    ids = _examples(tmp_path / "rubrics" / "faithfulness-aligned" / "v1.yaml")
    assert set(ids) <= set(report["split"]["dev_ids"])
    ids_file = tmp_path / "dev.txt"
    ids_file.write_text("\n".join(report["split"]["dev_ids"]) + "\n")
    code = _align(tmp_path, records, "--dev-ids", str(ids_file), "--overwrite",
                  "--rubrics-dir", str(tmp_path / "rubrics"))  # fmt: skip
    assert code == 0
    assert _examples(tmp_path / "rubrics" / "faithfulness-aligned" / "v2.yaml") == ids


# ---- the file: version, lock, prompt -------------------------------------------------------


def test_built_in_becomes_id_aligned_then_its_next_versions(tmp_path: Path, records: Path) -> None:
    user = tmp_path / "rubrics"
    split = ["--split", "test=0.3", "--rubrics-dir", str(user)]
    assert _align(tmp_path, records, *split) == 0
    assert _align(tmp_path, records, *split, "--overwrite") == 0
    assert sorted(p.name for p in (user / "faithfulness-aligned").iterdir()) == [
        "v1.yaml",
        "v2.yaml",
    ]
    assert not (DEFAULT_RUBRICS_DIR / "faithfulness" / "v2.yaml").exists()
    aligned = load_rubric("faithfulness-aligned@2", RubricLibrary([user]))
    source = load_rubric("faithfulness")
    assert (aligned.kind, aligned.inputs, aligned.system) == (
        source.kind,
        source.inputs,
        source.system,
    )
    assert aligned.spec == source.spec and len(aligned.examples) == 4
    first = aligned.examples[0]
    cases = {c["id"]: c for c in map(json.loads, CASES.read_text().splitlines())}
    assert first.inputs == {k: cases[first.id][k] for k in ("question", "contexts", "answer")}
    human = {row.split(",")[0]: row.split(",")[1] for row in LABELS.read_text().splitlines()[1:]}
    assert all(e.label == human[e.id] for e in aligned.examples)
    assert all("faithfulness@1 said" in e.note for e in aligned.examples)


def test_a_user_rubric_gets_its_next_version_and_the_lock_is_left_alone(tmp_path: Path) -> None:
    user = tmp_path / "rubrics"
    (user / "grounded").mkdir(parents=True)
    text = (DEFAULT_RUBRICS_DIR / "faithfulness" / "v1.yaml").read_text()
    (user / "grounded" / "v1.yaml").write_text(text.replace("id: faithfulness", "id: grounded"))
    write_lock(user)
    lock_before = (user / "rubrics.lock").read_bytes()
    graded = tmp_path / "graded.jsonl"
    Judge(JudgeConfig(use_cache=False), rubrics_dir=RubricLibrary([user])).grade_file(
        CASES, graded, "grounded"
    )
    code = _align(tmp_path, graded, "--split", "test=0.3", "--rubrics-dir", str(user),
                  rubric="grounded")  # fmt: skip
    assert code == 0
    assert (user / "grounded" / "v2.yaml").is_file()
    assert (user / "rubrics.lock").read_bytes() == lock_before  # left for review
    assert "grounded@2" not in read_lock(user) and verify_lock(user) == []
    assert load_rubric("grounded", RubricLibrary([user])).version == 2
    assert main(["rubrics", "lock", "--rubrics-dir", str(user)], env={}) == 0
    assert "grounded@2" in read_lock(user)


def test_golden_prompt_of_a_rubric_with_examples() -> None:
    """The exact messages of a rubric with `examples` (tests/data/rubrics-with-examples).
    Regenerate deliberately with UPDATE_GOLDEN=1."""
    rubric = read_rubric_file(DATA / "rubrics-with-examples" / "faith-examples" / "v1.yaml")
    messages = rubric.render(Case.model_validate(case()))
    path = GOLDEN / "faith-examples_v1.prompt.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps({"messages": messages}, indent=2, ensure_ascii=False) + "\n")
    assert {"messages": messages} == json.loads(path.read_text())
    plain = load_rubric("faithfulness")
    assert messages[0]["content"].startswith(
        plain.render(Case.model_validate(case()))[0]["content"]
    )
    assert EXAMPLES_HEADING in messages[0]["content"]


@pytest.mark.parametrize(
    "source",
    [
        DEFAULT_RUBRICS_DIR / "faithfulness" / "v1.yaml",
        DEFAULT_RUBRICS_DIR / "relevance" / "v1.yaml",
        DEFAULT_RUBRICS_DIR / "pairwise" / "v1.yaml",
        EXAMPLES / "rubrics" / "tone" / "v1.yaml",
        EXAMPLES / "rubrics" / "policy" / "v1.yaml",
        EXAMPLES / "rubrics" / "support-quality" / "v1.yaml",
    ],
    ids=lambda p: p.parent.name,
)
def test_every_kind_renders_examples_the_same_way_after_its_instructions(
    tmp_path: Path, source: Path
) -> None:
    data = yaml.safe_load(source.read_text())
    plain = read_rubric_file(source)
    inputs = {name: "x" for name in plain.inputs}
    data["examples"] = [{"id": "e1", "inputs": inputs, "label": "L", "note": 'say "A"'}]
    (tmp_path / plain.id).mkdir()
    path = tmp_path / plain.id / source.name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with_examples = read_rubric_file(path)
    system = with_examples.behaviour.system_prompt(with_examples)
    expected = json.dumps({"inputs": inputs, "label": "L", "note": 'say "A"'})
    assert (
        system == plain.behaviour.instructions(plain) + "\n\n" + EXAMPLES_HEADING + "\n" + expected
    )
    assert system.endswith(examples_text(with_examples))
    assert plain.behaviour.system_prompt(plain) == plain.behaviour.instructions(plain)


def test_an_example_with_inputs_the_rubric_does_not_read_is_refused(tmp_path: Path) -> None:
    data = yaml.safe_load((DEFAULT_RUBRICS_DIR / "relevance" / "v1.yaml").read_text())
    data["examples"] = [{"id": "e1", "inputs": {"contexts": ["c"]}, "label": "3"}]
    (tmp_path / "relevance").mkdir()
    (tmp_path / "relevance" / "v1.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(Exception, match="the rubric does not read"):
        read_rubric_file(tmp_path / "relevance" / "v1.yaml")


# ---- exit codes ------------------------------------------------------------------------


def _nothing_written(tmp_path: Path) -> None:
    assert not (tmp_path / "test.jsonl").exists()
    assert not list(tmp_path.glob("rubrics/*/v*.yaml"))


def _code(tmp_path: Path, records: Path, *extra: str, rubric: str = "faithfulness") -> int:
    """The exit code, whether main returns it or argparse exits with it."""
    try:
        return _align(tmp_path, records, *extra, rubric=rubric)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--split", "test=0.3"], "give --rubrics-dir DIR"),
        (["--rubrics-dir", "R"], "one of the arguments --split --dev-ids is required"),
        (["--split", "test=0.3", "--dev-ids", "x", "--rubrics-dir", "R"], "not allowed with"),
        (["--split", "test=1.5", "--rubrics-dir", "R"], "1.5 is not strictly between 0 and 1"),
        (["--split", "test=0.3", "--examples", "0", "--rubrics-dir", "R"], "between 1 and"),
        (["--split", "test=0.99", "--rubrics-dir", "R"], "cannot split"),
        (["--dev-ids", "NOWHERE", "--rubrics-dir", "R"], "cannot be read"),
        (["--dev-ids", "NONE", "--rubrics-dir", "R"], "none of the 2 dev ids"),
    ],
)
def test_bad_usage_exits_2_and_writes_nothing(
    tmp_path: Path,
    records: Path,
    extra: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "none.txt").write_text("nobody-1\nnobody-2\n")
    where = {
        "R": tmp_path / "rubrics",
        "NOWHERE": tmp_path / "no.txt",
        "NONE": tmp_path / "none.txt",
    }
    argv = [str(where[e]) if e in where else e for e in extra]
    assert _code(tmp_path, records, *argv) == 2
    assert message in capsys.readouterr().err
    _nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("rubric", "swap", "message"),
    [
        ("faithfulness@9", {}, "no version 9"),
        ("relevance", {}, "graded with rubric 'faithfulness', not 'relevance'"),
        ("faithfulness", {"--labels": "MISSING"}, "no such file"),
        ("faithfulness", {"--records": "MISSING"}, "no such file"),
        ("faithfulness", {"--labels": "RECORDS"}, "graded records"),
        ("faithfulness", {"--cases": "OTHER_CASES"}, "no case with the id(s)"),
        ("faithfulness", {"--cases": "BAD_CASES"}, "not valid JSON"),
        ("faithfulness", {"--test-labels": "LABELS"}, "would overwrite the input"),
    ],
)
def test_bad_files_exit_2_and_write_nothing(
    tmp_path: Path,
    records: Path,
    rubric: str,
    swap: dict[str, str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "other.jsonl").write_text(json.dumps(case("other-1")) + "\n")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    files = {
        "MISSING": str(tmp_path / "missing.csv"),
        "RECORDS": str(records),
        "OTHER_CASES": str(tmp_path / "other.jsonl"),
        "BAD_CASES": str(tmp_path / "bad.jsonl"),
        "LABELS": str(LABELS),
    }
    argv = ["align", "--rubric", rubric, "--labels", str(LABELS), "--records", str(records)]
    argv += ["--cases", str(CASES), "--test-labels", str(tmp_path / "test.jsonl")]
    argv += ["--split", "test=0.3", "--rubrics-dir", str(tmp_path / "rubrics")]
    for flag, name in swap.items():
        argv[argv.index(flag) + 1] = files[name]
    assert main(argv, env={}) == 2
    assert message in capsys.readouterr().err
    _nothing_written(tmp_path)


def test_an_existing_test_labels_file_needs_overwrite(
    tmp_path: Path, records: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "test.jsonl").write_text("keep me\n")
    code = _code(tmp_path, records, "--split", "test=0.3", "--rubrics-dir", str(tmp_path / "r"))
    assert code == 2 and "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "test.jsonl").read_text() == "keep me\n"


def test_no_disagreement_on_dev_writes_nothing_and_says_so(
    tmp_path: Path, records: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    agreeing = tmp_path / "agree.jsonl"
    agreeing.write_text("".join(json.dumps({"id": r["id"], "label": r["label"]}) + "\n"
                                for r in rows if r["label"]))  # fmt: skip
    argv = ["align", "--rubric", "faithfulness", "--labels", str(agreeing)]
    argv += ["--records", str(records), "--cases", str(CASES), "--split", "test=0.3"]
    argv += ["--rubrics-dir", str(tmp_path / "rubrics"), "--test-labels", str(tmp_path / "t.jsonl")]
    assert main(argv, env={}) == 0
    assert "nothing to learn from, no rubric written" in capsys.readouterr().err
    assert not list(tmp_path.glob("rubrics/*/v*.yaml"))


def test_the_next_commands_are_printed(
    tmp_path: Path, records: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = tmp_path / "rubrics"
    assert _align(tmp_path, records, "--split", "test=0.3", "--rubrics-dir", str(user)) == 0
    out = capsys.readouterr().out
    candidate = f"{records.stem}.faithfulness-aligned-v1.jsonl"
    assert (
        f"judge grade {CASES} --rubric faithfulness-aligned@1 --rubrics-dir {user} -o {candidate}"
        in out
    )
    assert (
        f"judge gate --baseline {records} --candidate {candidate} --labels {tmp_path / 'test.jsonl'}"
        in out
    )
    assert f"judge rubrics lock --rubrics-dir {user}" in out


def test_a_model_judges_records_name_the_model_in_the_grade_command(
    tmp_path: Path, records: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    for row in rows:
        row["judge"]["model"] = "gpt-4o-2024-08-06"
    model_records = tmp_path / "model.jsonl"
    model_records.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = _align(
        tmp_path, model_records, "--split", "test=0.3", "--rubrics-dir", str(tmp_path / "r")
    )
    assert code == 0
    assert (
        "-o model.faithfulness-aligned-v1.jsonl --model gpt-4o-2024-08-06"
        in capsys.readouterr().out
    )
