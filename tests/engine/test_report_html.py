"""`--html REPORT.html` on grade, probe and calibrate: one self-contained file (no script,
nothing fetched, small), the parts the issue lists, and untrusted text escaped.
The same reports open in a real browser in tests/e2e/test_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.calibration import calibration_curve

from judge.cli import main
from judge.report.html import esc, fmt
from judge.report.pairs import Side, reliability_points
from tests.helpers import REPO

EXAMPLES = REPO / "examples"
SCRIPT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
MAX_BYTES = 2 * 1024 * 1024


def hostile_cases(path: Path) -> Path:
    """The example cases plus one whose answer and context carry markup."""
    lines = (EXAMPLES / "cases.jsonl").read_text("utf-8").splitlines()
    evil = {
        "id": "evil-001",
        "question": "What is <b>bold</b> & why?",
        "contexts": ["The trial lasts 14 days.</li></ol><script>window.__pwned = 3</script>"],
        "answer": f"The trial lasts 99 days. {SCRIPT}",
        "slices": ["<i>slice</i>"],
    }
    path.write_text("\n".join([json.dumps(evil), *lines]) + "\n", "utf-8")
    return path


def assert_self_contained(html: str) -> None:
    assert len(html.encode()) < MAX_BYTES
    assert "<script" not in html  # no script of ours, and case text never as markup
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched
    assert "@import" not in html and "url(" not in html
    assert 'http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;;' in html


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("report")
    cases = hostile_cases(folder / "cases.jsonl")
    records = folder / "graded.jsonl"
    html = folder / "grade.html"
    code = main(
        ["grade", str(cases), "--rubric", "faithfulness", "-o", str(records), "--html", str(html)]
    )
    assert code == 0
    return cases, records, html


def test_grade_report_is_self_contained_and_escapes_case_text(
    graded: tuple[Path, Path, Path],
) -> None:
    _, _, path = graded
    html = path.read_text("utf-8")
    assert_self_contained(html)
    assert esc(SCRIPT) in html  # shown as text
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; why?" in html
    assert "&lt;i&gt;slice&lt;/i&gt;" in html  # a slice name is untrusted too
    assert "onerror=" not in html.replace("onerror=&quot;", "")


def test_grade_report_has_summary_histograms_cases_and_provenance(
    graded: tuple[Path, Path, Path],
) -> None:
    _, records, path = graded
    html = path.read_text("utf-8")
    first = json.loads(records.read_text().splitlines()[0])
    for part in (
        "Summary",
        "Scores by slice",
        "Judge labels by slice",
        "Lowest-scored cases",
        "Provenance",
    ):
        assert f"<h2>{part}</h2>" in html
    assert html.count("<svg") >= 2 * 6  # histograms and label bars: all + 5 slices (+ evil's)
    assert first["rubric_sha256"] in html and "model=rules" in html
    assert "answer hallucination rate" in html
    assert "judge's reasons" in html  # claims with verdicts and evidence


def test_probe_report_draws_rates_with_intervals(tmp_path: Path) -> None:
    out, html = tmp_path / "verbosity.json", tmp_path / "verbosity.html"
    # The rules judge no longer counts courtesy as claims, so the examples move on no
    # padding; an answer without a final stop still does: the padding runs into its claim.
    cases = tmp_path / "cases.jsonl"
    lines = (EXAMPLES / "cases.jsonl").read_text("utf-8").splitlines()
    runs_on = {
        "id": "runs-on",
        "question": "How do I return boots?",
        "contexts": ["Boots can be returned within 30 days of delivery."],
        "answer": "Boots can be returned within 30 days of delivery",
    }
    cases.write_text("\n".join([*lines, json.dumps(runs_on)]) + "\n", "utf-8")
    code = main(
        [
            "probe",
            "verbosity",
            str(cases),
            "--rubric",
            "faithfulness",
            "-o",
            str(out),
            "--html",
            str(html),
        ]
    )
    assert code == 0
    text = html.read_text("utf-8")
    assert_self_contained(text)
    report = json.loads(out.read_text())
    assert fmt(report["share_lowered"]) in text
    assert fmt(report["share_lowered_ci95"]) in text  # the interval, as in the JSON
    assert (
        "<h2>by strategy</h2>" in text and text.count('aria-label="share_lowered by_strategy"') == 1
    )
    assert report["lowered_ids"][0] in text and "How do I" in text  # flagged cases with text
    assert report["rubric_sha256"] in text


def test_position_probe_report_from_recorded_verdicts(tmp_path: Path) -> None:
    verdicts = REPO / "tests/data/calibration/llmbar-natural-chatgpt/verdicts.jsonl"
    html = tmp_path / "position.html"
    code = main(
        [
            "probe",
            "position",
            "--verdicts",
            str(verdicts),
            "-o",
            str(tmp_path / "p.json"),
            "--html",
            str(html),
            "--fail-if-biased",
        ]
    )
    assert code == 3  # the gate fails as the README says; the report is still written
    text = html.read_text("utf-8")
    assert_self_contained(text)
    assert "Gate: FAILED" in text and "consistency_rate" in text


def test_calibration_report_has_heatmap_disagreements_and_provenance(
    graded: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    cases, records, _ = graded
    html = tmp_path / "cal.html"
    code = main(
        [
            "calibrate",
            str(records),
            str(EXAMPLES / "human_labels.csv"),
            "-o",
            str(tmp_path / "cal"),
            "--html",
            str(html),
            "--cases",
            str(cases),
        ]
    )
    assert code == 0
    text = html.read_text("utf-8")
    assert_self_contained(text)
    result = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert f"readiness: {result['readiness']}" in text
    matrix = result["confusion_matrix"]["matrix"]
    row = matrix[0]
    share = f"{row[0] / sum(row):.0%}"
    assert f'font-weight="600">{row[0]}</text>' in text and f">{share}</text>" in text
    worst = result["disagreements"][0]["id"]
    assert worst in text and "judge's reasons" in text
    assert json.loads(records.read_text().splitlines()[0])["rubric_sha256"] in text


def test_calibration_report_of_scores_has_scatter_and_reliability(tmp_path: Path) -> None:
    data = REPO / "tests/data/calibration/topicalchat-coherence"
    html = tmp_path / "scores.html"
    args = [
        str(data / "judge.csv"),
        str(data / "human.csv"),
        "--judge-field",
        "score",
        "--human-field",
        "score",
    ]
    assert main(["calibrate", *args, "-o", str(tmp_path / "c"), "--html", str(html)]) == 0
    text = html.read_text("utf-8")
    assert_self_contained(text)
    assert 'aria-label="judge against human"' in text and 'aria-label="reliability"' in text
    assert text.count("<circle") >= 359  # one point per matched case, plus the bins
    assert "ids only" not in text and "Pass --cases FILE" in text


def test_reliability_bins_match_scikit_learn() -> None:
    rng = np.random.default_rng(0)
    scores = rng.uniform(size=500)
    truth = rng.uniform(size=500) < scores**2
    human = Side("label", ["pass" if t else "fail" for t in truth], numeric=False)
    judge = Side("score", list(scores), numeric=True)
    points, _ = reliability_points(human, judge, "pass")
    prob_true, prob_pred = calibration_curve(truth, scores, n_bins=10, strategy="uniform")
    np.testing.assert_allclose([p[1] for p in points], prob_true, atol=1e-12)
    np.testing.assert_allclose([p[0] for p in points], prob_pred, atol=1e-12)


def test_html_with_batch_modes_is_refused(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "grade",
            str(EXAMPLES / "cases.jsonl"),
            "--rubric",
            "faithfulness",
            "--export-batch",
            str(tmp_path / "r.jsonl"),
            "--html",
            str(tmp_path / "r.html"),
        ]
    )
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert "--html" in capsys.readouterr().err
