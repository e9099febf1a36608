"""`judge drift` end to end on generated (seeded) files: a stable held-out stream exits 0
with no alarm; a stream whose judge starts to disagree exits 3 and names the first window
after the change or the one after it; too few labels exits 1 saying how many are needed;
bad input exits 2 naming the file and line."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from calibration.agreement.kappa_variance import cell_probabilities
from judge.cli import main

WINDOW = 100


def write_stream(
    folder: Path, kappas: list[float], *, size: int = WINDOW, seed: int = 0, human_rate=0.5
) -> tuple[Path, Path]:
    """Graded records (faithful/unfaithful, one a day per window) and a labels CSV: window
    ``w`` has ``size`` cases drawn at kappa ``kappas[w]``."""
    rng = np.random.default_rng(seed)
    records, labels = [], ["id,label"]
    start = datetime(2026, 11, 2, tzinfo=UTC)
    for w, kappa in enumerate(kappas):
        table = cell_probabilities(kappa, human_rate, human_rate).ravel()
        for i, cell in enumerate(rng.choice(4, size=size, p=table)):
            case = f"w{w}-{i}"
            judged = "faithful" if cell % 2 else "unfaithful"
            human = "faithful" if cell // 2 else "unfaithful"
            when = start + timedelta(weeks=w, minutes=i)
            records.append(
                {
                    "id": case,
                    "rubric": "faithfulness",
                    "rubric_version": 1,
                    "rubric_sha256": "0" * 64,
                    "judge": {"model": "rules"},
                    "status": "ok",
                    "label": judged,
                    "graded_at": when.isoformat(),
                }
            )
            labels.append(f"{case},{human}")
    folder.mkdir(parents=True, exist_ok=True)
    graded = folder / "graded.jsonl"
    graded.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    human_file = folder / "labels.csv"
    human_file.write_text("\n".join(labels) + "\n", encoding="utf-8")
    return graded, human_file


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["drift", *args, "--bootstrap", "200"], env={})
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_stable_held_out_stream_raises_no_alarm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.75] * 8, seed=1)
    code, out, err = run([str(graded), "--labels", str(labels), "--window", "100"], capsys)
    assert code == 0, err
    assert out.startswith("# Judge drift: kappa with people")
    assert "**ALARM**" not in out and "drift: stable" in err
    assert "time: file order" in out


def test_a_judge_that_starts_to_disagree_exits_3_and_names_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 4 + [0.45] * 4, seed=2)
    report = tmp_path / "drift.json"
    html = tmp_path / "drift.html"
    args = [str(graded), "--labels", str(labels), "--window", "100", "--json", "-o", str(report)]
    code, out, err = run([*args, "--html", str(html)], capsys)
    assert code == 3, err
    result = json.loads(report.read_text("utf-8"))
    assert result["alarm"]["first_window"] in ("5", "6")  # the change starts at window 5
    assert result["status"]["verdict"] == "alarm" and out == ""
    page = html.read_text("utf-8")
    assert "data:image/png;base64," in page and "Judge drift" in page


def test_against_the_past_a_judge_that_starts_to_disagree_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 4 + [0.45] * 4, seed=2)
    html = tmp_path / "drift.html"
    args = [str(graded), "--labels", str(labels), "--window", "100", "--reference", "past"]
    code, out, err = run([*args, "--html", str(html)], capsys)
    assert code == 3, err
    assert (
        "- reference: past: each window against all the windows before it, pooled (from 1)" in out
    )
    assert "| 1 | 100 |" in out and "| reference |" in out
    assert "disagreement with people (arcsine) against all the windows before it" in out
    assert re.search(r"drift: alarm: agreement dropped at window [56] \(against the past, a drop "
                     r"that lasts becomes the reference", err), err  # fmt: skip
    assert "against the past, a drop that lasts becomes the reference" in out  # beside **alarm**
    assert "past: each window against all the windows before it" in html.read_text("utf-8")


def test_windows_by_week_state_the_time_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 3 + [0.3] * 3, seed=3)
    code, out, err = run([str(graded), "--labels", str(labels), "--by", "week"], capsys)
    assert code == 3, err
    assert "time: record grading time (graded_at)" in out
    assert "| 2026-W45 | 100 |" in out and "| 2026-W46 | 100 |" in out


def test_too_few_labels_exit_4_and_say_how_many_are_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 4, not 1: a CI step must tell "too few labels to tell" from a crash or a failed
    endpoint (exit 1) (issue 51, item 7)."""
    graded, labels = write_stream(tmp_path, [0.8, 0.8], size=20, seed=4)
    code, out, err = run([str(graded), "--labels", str(labels), "--window", "20"], capsys)
    assert code == 4, err
    assert "20 labels, needs 30 (10 more)" in out
    assert "needs at least 30" in err


def test_bad_input_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8], size=40, seed=5)
    with graded.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    code, _, err = run([str(graded), "--labels", str(labels), "--window", "20"], capsys)
    assert code == 2
    assert f"{graded}:41" in err


def test_drift_reads_a_judge_label_store_directly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.label.sampling import Item
    from judge.label.store import LabelStore

    graded, labels = write_stream(tmp_path, [0.8] * 3, size=40, seed=6)
    rows = [line.split(",") for line in labels.read_text("utf-8").splitlines()[1:]]
    store = LabelStore(tmp_path / "answers.faithfulness.labels.sqlite")
    store.initialise({"rubric": "faithfulness"}, [(Item(i, 1.0), {}) for i, _ in rows])
    for case, label in rows:
        store.record("ana", case, label=label)
    store.close()
    csv_code, csv_out, _ = run([str(graded), "--labels", str(labels), "--window", "40"], capsys)
    code, out, err = run([str(graded), "--labels", str(tmp_path), "--window", "40"], capsys)
    assert code == csv_code == 0, err
    table = [line for line in out.splitlines() if line.startswith("| 2 |")]
    assert table and table == [line for line in csv_out.splitlines() if line.startswith("| 2 |")]


def test_a_named_reference_window_and_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 3, size=40, seed=7)
    base = [str(graded), "--labels", str(labels), "--window", "40", "--json"]
    code, out, err = run([*base, "--reference", "2"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["reference"] == {**result["reference"], "kind": "window", "name": "2"}
    assert [w["difference"] is None for w in result["windows"]] == [False, True, False]
    code, _, err = run([*base, "--reference", "9"], capsys)
    assert code == 2 and "--reference 9: no such window (windows: 1, 2, 3)" in err


def test_a_release_calibration_as_the_reference_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 2 + [0.3] * 2, size=100, seed=8)
    folder = tmp_path / "release"
    folder.mkdir()
    table = {"labels": ["unfaithful", "faithful"], "matrix": [[225, 25], [25, 225]]}
    (folder / "calibration.json").write_text(json.dumps({"confusion_matrix": table}), "utf-8")
    base = [str(graded), "--labels", str(labels), "--window", "100", "--json"]
    code, out, err = run([*base, "--reference", str(folder)], capsys)
    assert code == 3, err
    result = json.loads(out)
    assert result["reference"]["kind"] == "file" and result["reference"]["n"] == 500
    assert all(w["difference"] is not None for w in result["windows"])
    assert result["alarm"]["first_window"] in ("3", "4")


def test_windows_by_time_without_a_time_say_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8], size=40, seed=9)
    lines = [json.loads(line) for line in graded.read_text("utf-8").splitlines()]
    graded.write_text("".join(json.dumps({**r, "graded_at": None}) + "\n" for r in lines))
    code, _, err = run([str(graded), "--labels", str(labels), "--by", "day"], capsys)
    assert code == 2
    assert "use --window N (file order) or --time-field FIELD" in err


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_repeated_ids_and_inputs_are_dropped_before_windowing_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 2, size=60, seed=6)
    records = _rows(graded)
    for i, record in enumerate(records):
        record["inputs_sha256"] = f"{i:064x}"
    again = dict(records[3])  # the same case graded again
    copy = {**records[5], "id": "w9-copy"}  # the same inputs under another id
    graded.write_text("".join(json.dumps(r) + "\n" for r in [*records, again, copy]), "utf-8")
    out_file = tmp_path / "drift.json"
    args = [str(graded), "--labels", str(labels), "--window", "60", "--json", "-o", str(out_file)]
    code, _, err = run(args, capsys)
    assert code == 0, err
    report = json.loads(out_file.read_text("utf-8"))
    assert report["repeats_dropped"] == {"ids": 1, "inputs": 1}
    assert report["n"] == 120 and [w["n"] for w in report["windows"]] == [60, 60]
    assert "independent" in report["pairs"] and "--group-field" in report["pairs"]
    code, out, _ = run(args[:-3], capsys)
    assert "- repeats dropped: 1 repeated ids, 1 repeated inputs (inputs_sha256)" in out


def test_with_a_group_field_the_null_resamples_groups_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, labels = write_stream(tmp_path, [0.8] * 4, size=60, seed=7)
    records = _rows(graded)
    for i, record in enumerate(records):
        record["metadata"] = {"conversation": f"c{i // 3}"}  # three turns a conversation
    graded.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    args = [str(graded), "--labels", str(labels), "--window", "60"]
    code, out, err = run([*args, "--group-field", "metadata.conversation"], capsys)
    assert code == 0, err
    assert "cluster bootstrap of the stream's groups; assumes independent groups" in out
    assert "- pairs: in groups by metadata.conversation" in out


def test_slices_are_tested_under_one_threshold_and_the_family_names_the_one_that_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steady, steady_labels = write_stream(tmp_path / "a", [0.8] * 6, size=80, seed=8)
    drops, drop_labels = write_stream(tmp_path / "b", [0.8] * 3 + [0.3] * 3, size=80, seed=9)
    records = [{**r, "slice": "steady"} for r in _rows(steady)]
    records += [{**r, "id": "b" + r["id"], "slice": "drops"} for r in _rows(drops)]
    graded = tmp_path / "graded.jsonl"
    graded.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    lines = steady_labels.read_text("utf-8").splitlines()
    lines += ["b" + line for line in drop_labels.read_text("utf-8").splitlines()[1:]]
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(lines) + "\n", "utf-8")
    out_file = tmp_path / "drift.json"
    args = [str(graded), "--labels", str(labels), "--window", "80", "--slice-field", "slice"]
    code, _, err = run([*args, "--json", "-o", str(out_file)], capsys)
    assert code == 3, err
    report = json.loads(out_file.read_text("utf-8"))
    by_name = {part["slice"]: part for part in report["slices"]}
    assert set(by_name) == {"steady", "drops"}
    assert report["alarm"]["slices"] == ["drops"] and report["status"]["verdict"] == "alarm"
    assert by_name["drops"]["alarm"]["first_window"] in ("4", "5")
    assert not by_name["steady"]["alarm"]["fired"]
    threshold = report["alarm"]["threshold"]
    assert all(part["alarm"]["threshold"] == threshold for part in report["slices"])
    code, out, _ = run(args, capsys)
    assert "## slice drops" in out and "## slice steady" in out and "under one threshold" in out
