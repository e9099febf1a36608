"""`judge certify` end to end on generated (seeded) files: a certificate (exit 0) with the
shape `judge grade --certificate` reads; a judge that cannot reach A (exit 3, naming the
highest A it could); 20 labels (exit 1, saying how many are needed); bad input (exit 2,
naming file and id): a record without a confidence, one outside [0, 1], the rules judge,
rungs of different rubrics, labels that match no record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from calibration.certify import FORMAT, certificate_sha256
from judge.cli import main

SHA = "a" * 64


def write_rung(
    path: Path, n: int, *, seed: int, shape: float, over: float = 1.0, model: str = "gpt-4o-mini",
    rubric: str = "faithfulness", truth: np.ndarray | None = None,
) -> Path:  # fmt: skip
    """Graded records whose confidence is 0.5 + 0.5 Beta(shape, 1) and which agree with
    `truth` with probability 1 - over * (1 - confidence)."""
    rng = np.random.default_rng(seed)
    truth = np.random.default_rng(99).random(n) < 0.6 if truth is None else truth
    conf = np.round(0.5 + 0.5 * rng.beta(shape, 1, n), 4)
    ok = rng.random(n) < np.clip(1 - over * (1 - conf), 0, 1)
    rows = []
    for i in range(n):
        said = truth[i] if ok[i] else not truth[i]
        rows.append({
            "id": f"c{i}", "rubric": rubric, "rubric_version": 1, "rubric_sha256": SHA,
            "judge": {"model": model, "temperature": 0.0}, "status": "ok",
            "label": "faithful" if said else "unfaithful", "confidence": float(conf[i]),
            "confidence_source": "logprobs",
            "usage": {"prompt_tokens": 1000, "completion_tokens": 200},
        })  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_labels(path: Path, n: int, labelled: int) -> Path:
    truth = np.random.default_rng(99).random(n) < 0.6
    lines = ["id,label"] + [
        f"c{i},{'faithful' if truth[i] else 'unfaithful'}" for i in range(labelled)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["certify", *args], env={})
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_two_rung_cascade_is_certified_with_the_certificate_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cheap = write_rung(tmp_path / "cheap.jsonl", 600, seed=1, shape=2.0, over=1.3)
    strong = write_rung(tmp_path / "strong.jsonl", 600, seed=2, shape=6.0, model="gpt-4o")
    labels = write_labels(tmp_path / "labels.csv", 600, 500)
    out = tmp_path / "cert.json"
    code, text, err = run(
        [str(cheap), str(strong), "--labels", str(labels), "--agreement", "0.9",
         "--json", "-o", str(out), "--html", str(tmp_path / "r.html")], capsys,
    )  # fmt: skip
    assert code == 0, err
    cert = json.loads(out.read_text())
    assert json.loads(text) == cert
    assert set(cert) >= {
        "format", "agreement", "delta", "min_decided", "n", "rubric", "rungs", "coverage",
        "coverage_ci95", "certified", "method", "assumes",
    }  # fmt: skip
    assert cert["format"] == FORMAT and cert["certified"] is True
    assert (cert["agreement"], cert["delta"], cert["min_decided"], cert["n"]) == (0.9, 0.1, 30, 500)
    assert cert["rubric"] == {"id": "faithfulness", "version": 1, "sha256": SHA}
    first, second = cert["rungs"]
    assert set(first) == {
        "records", "judge", "confidence_source", "threshold", "reached", "decided",
        "agreement", "disagreement_upper", "cost_per_1000",
    }  # fmt: skip
    assert first["records"] == str(cheap) and first["judge"]["model"] == "gpt-4o-mini"
    assert first["confidence_source"] == "logprobs"
    assert first["reached"] == 500 and second["reached"] == 500 - first["decided"]
    for rung in cert["rungs"]:
        if rung["threshold"] is not None:
            assert rung["disagreement_upper"] <= 0.1 and 0 <= rung["threshold"] <= 1
    decided = first["decided"] + second["decided"]
    assert cert["coverage"] == pytest.approx(decided / 500)
    lo, hi = cert["coverage_ci95"]
    assert lo < cert["coverage"] < hi
    # gpt-4o-mini at $0.15/$0.60 per million: 1000 and 200 tokens a case
    assert first["cost_per_1000"] == pytest.approx((1000 * 0.15 + 200 * 0.60) / 1000)
    assert cert["release_pass_rate"]["estimate"] is not None
    assert cert["kept"] in ("pooled", "per-rung")  # which of the two tests decided more
    assert re.fullmatch(r"[0-9a-f]{64}", certificate_sha256(cert))
    assert "coverage-risk" in (tmp_path / "r.html").read_text()


def test_the_table_says_threshold_share_bound_cost_and_guarantee(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rung = write_rung(tmp_path / "r.jsonl", 400, seed=3, shape=4.0)
    labels = write_labels(tmp_path / "l.csv", 400, 400)
    code, text, err = run([str(rung), "--labels", str(labels), "--agreement", "0.85"], capsys)
    assert code == 0, err
    assert "| 1 | gpt-4o-mini |" in text and "coverage:" in text and "95% interval" in text
    assert "all to the last rung" in text and "guarantee: with probability at least 90%" in text
    assert "random sample of the stream" in text
    assert err.startswith("certify: certified:")


def test_a_rung_that_decides_nothing_yet_costs_is_pointed_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cheap rung too unsure to decide anything at A is paid on every case for nothing:
    the table says so in the text and the HTML report."""
    weak = write_rung(tmp_path / "weak.jsonl", 400, seed=4, shape=1.0, over=2.0)
    strong = write_rung(tmp_path / "strong.jsonl", 400, seed=2, shape=6.0, model="gpt-4o")
    labels = write_labels(tmp_path / "l.csv", 400, 400)
    args = [str(weak), str(strong), "--labels", str(labels), "--agreement", "0.9"]
    code, text, err = run([*args, "--html", str(tmp_path / "r.html")], capsys)
    assert code == 0, err
    line = next(x for x in text.splitlines() if x.startswith("note: rung 1"))
    assert line == (
        "note: rung 1 (gpt-4o-mini) decides nothing at agreement 0.9, yet costs $0.2700 per "
        "1,000 cases reaching it: certify the cascade without it"
    )
    assert "rung 1 (gpt-4o-mini) decides nothing" in (tmp_path / "r.html").read_text()
    assert "kept: the per-rung tests, which decided more labelled cases" in text
    code, text, _ = run([str(strong), "--labels", str(labels), "--agreement", "0.9"], capsys)
    assert code == 0 and "note:" not in text and "kept:" not in text  # one rung: one test


def test_a_judge_that_cannot_reach_the_agreement_exits_3_naming_the_highest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rung = write_rung(tmp_path / "weak.jsonl", 300, seed=4, shape=1.0, over=2.0)
    labels = write_labels(tmp_path / "l.csv", 300, 300)
    code, _, err = run([str(rung), "--labels", str(labels), "--agreement", "0.95"], capsys)
    assert code == 3
    assert re.search(r"highest agreement that could be certified at delta 0.1 is 0\.\d+", err)


def test_twenty_labels_exit_1_saying_how_many_are_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rung = write_rung(tmp_path / "r.jsonl", 200, seed=5, shape=6.0)
    labels = write_labels(tmp_path / "l.csv", 200, 20)
    code, _, err = run([str(rung), "--labels", str(labels), "--agreement", "0.9"], capsys)
    assert code == 1
    assert "20 labelled cases" in err and "needs at least 30" in err


def _rewrite(path: Path, index: int, **fields: object) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for key, value in fields.items():
        if value is None:
            rows[index].pop(key, None)
        else:
            rows[index][key] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"confidence": None}, "c7'?: a verdict without a confidence"),
        ({"confidence": 1.5}, "c7'?: confidence 1.5 is not a number from 0 to 1"),
        ({"confidence": None, "judge": {"model": "rules"}}, "needs a model judge's confidence"),
    ],
)
def test_a_bad_record_exits_2_naming_file_and_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict, message: str
) -> None:
    rung = write_rung(tmp_path / "r.jsonl", 100, seed=6, shape=6.0)
    _rewrite(rung, 7, **change)
    labels = write_labels(tmp_path / "l.csv", 100, 100)
    code, _, err = run([str(rung), "--labels", str(labels), "--agreement", "0.9"], capsys)
    assert code == 2
    assert f"{rung}:8:" in err and re.search(message, err)


def test_rungs_of_different_rubrics_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = write_rung(tmp_path / "a.jsonl", 100, seed=7, shape=6.0)
    two = write_rung(tmp_path / "b.jsonl", 100, seed=8, shape=6.0, rubric="relevance")
    labels = write_labels(tmp_path / "l.csv", 100, 100)
    code, _, err = run([str(one), str(two), "--labels", str(labels), "--agreement", "0.9"], capsys)
    assert code == 2 and str(two) in err and "one rubric" in err


def test_labels_matching_no_record_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rung = write_rung(tmp_path / "r.jsonl", 100, seed=9, shape=6.0)
    labels = tmp_path / "l.csv"
    labels.write_text("id,label\nother-1,faithful\nother-2,unfaithful\n")
    code, _, err = run([str(rung), "--labels", str(labels), "--agreement", "0.9"], capsys)
    assert code == 2 and str(labels) in err and "no id in common" in err


def test_another_tools_csv_with_id_label_confidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(10)
    conf = np.round(0.5 + 0.5 * rng.beta(6, 1, 300), 3)
    truth = rng.random(300) < 0.5
    said = np.where(rng.random(300) < conf, truth, ~truth)
    lines = ["id,label,confidence"] + [
        f"x{i},{'Yes' if s else 'No'},{c}" for i, (s, c) in enumerate(zip(said, conf, strict=True))
    ]
    (tmp_path / "tool.csv").write_text("\n".join(lines) + "\n")
    labels = ["id,label"] + [f"x{i},{'yes' if t else 'no'}" for i, t in enumerate(truth)]
    (tmp_path / "l.csv").write_text("\n".join(labels) + "\n")
    code, text, err = run(
        [str(tmp_path / "tool.csv"), "--labels", str(tmp_path / "l.csv"), "--agreement", "0.85",
         "--json"], capsys,
    )  # fmt: skip
    assert code == 0, err
    cert = json.loads(text)
    assert cert["rubric"] is None and cert["rungs"][0]["judge"] == {"model": "tool"}
    assert cert["rungs"][0]["cost_per_1000"] is None and cert["rungs"][0]["decided"] > 0
