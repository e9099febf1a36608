"""The rough edges a newcomer hit (issue 28): reports that show what they claim, help that
runs, and terminal output that says what the JSON says. One test per item; the HTML ones
also open in a real browser in tests/e2e/test_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fnmatch import fnmatch
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from judge.cli import build_parser, main
from judge.cli._parser import command_parsers
from judge.probes._common import fmt_p
from judge.probes.verbosity import COURTESY_OPEN, _pointwise_markdown
from judge.report.grade import render_grade_report
from judge.report.svg import BIN_LABELS, histogram
from judge.testing import FakeOpenAIServer
from tests.helpers import REPO

EXAMPLES = REPO / "examples"
PARSERS = command_parsers(build_parser())


def run(capsys: pytest.CaptureFixture[str], *argv: Any, env: dict[str, str] | None = None):
    code = main([str(a) for a in argv], env={} if env is None else env)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def text_of(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def record(case_id: str, score: float) -> dict[str, Any]:
    return {"id": case_id, "status": "ok", "score": score, "label": "x", "slices": []}


# ---- HTML reports -----------------------------------------------------------------------


def test_histogram_bins_are_labelled_by_range_and_the_last_one_reads_1_0() -> None:
    assert BIN_LABELS[0] == "0.0–0.1" and BIN_LABELS[-1] == "0.9–1.0"
    svg = histogram([1.0] * 15 + [0.05], "scores")
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "0.9–1.0" in labels and "0.9" not in labels
    # the fifteen perfect scores stand above the bar labelled 0.9-1.0
    assert labels[labels.index("0.9–1.0") - 1] == "15"


def test_lowest_scored_cases_leave_out_cases_at_the_best_score(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [record("perfect-1", 1.0), record("half", 0.5), record("perfect-2", 1.0)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    html = render_grade_report({"rubric": "r@1", "cases": 3, "status": {"ok": 3}}, path)
    lowest = text_of(html.split("<h2>Lowest-scored cases</h2>")[1].split("<h2>")[0])
    assert "half" in lowest and "perfect" not in lowest
    assert "below the best score (1)" in lowest

    rows = [record("a", 1.0), record("b", 1.0)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    html = render_grade_report({"rubric": "r@1", "cases": 2, "status": {"ok": 2}}, path)
    lowest = text_of(html.split("<h2>Lowest-scored cases</h2>")[1].split("<h2>")[0])
    assert "Every scored case has the best score (1): none is listed." in lowest


def runs_on_cases(folder: Path) -> Path:
    """The examples plus one answer without a final stop: padding runs into its claim, so
    the probe sees score changes (the examples themselves move on no padding)."""
    runs_on = {
        "id": "runs-on",
        "question": "How do I return boots?",
        "contexts": ["Boots can be returned within 30 days of delivery."],
        "answer": "Boots can be returned within 30 days of delivery",
    }
    lines = (EXAMPLES / "cases.jsonl").read_text("utf-8").splitlines()
    path = folder / "cases.jsonl"
    path.write_text("\n".join([*lines, json.dumps(runs_on)]) + "\n", "utf-8")
    return path


def test_verbosity_report_counts_pairs_and_cases_apart_and_shows_the_padded_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, html = tmp_path / "v.json", tmp_path / "v.html"
    source = runs_on_cases(tmp_path)
    code, _, err = run(
        capsys, "probe", "verbosity", source, "--rubric", "faithfulness", "-o", out, "--html", html
    )
    assert code == 0, err
    report = json.loads(out.read_text("utf-8"))
    changes = report["score_changes"]
    assert changes and report["lowered_ids"] == ["runs-on"]
    assert report["score_changes_total"] == report["raised"] + report["lowered"] == len(changes)
    assert {c["id"] for c in changes if c["padded_score"] < c["score"]} == set(
        report["lowered_ids"]
    )
    text = text_of(html.read_text("utf-8"))
    assert f"pairs lowered {report['lowered']}" in text
    assert f"cases lowered by a padding: {len(report['lowered_ids'])}" in text
    assert "share_lowered" not in text.replace("share_lowered by_strategy", "")
    assert "Score changes" in text and "padded score" in text
    courtesy = [c for c in changes if c["padding"] == "courtesy"]
    assert courtesy and COURTESY_OPEN in text  # the padded answer itself, not only the original


def test_calibration_report_shows_ac1_alpha_and_the_corrected_rate_and_cases_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded, html = tmp_path / "g.jsonl", tmp_path / "c.html"
    assert (
        run(capsys, "grade", EXAMPLES / "cases.jsonl", "--rubric", "faithfulness", "-o", graded)[0]
        == 0
    )
    code, _, err = run(
        capsys,
        "calibrate",
        graded,
        EXAMPLES / "human_labels.csv",
        "-o",
        tmp_path / "cal",
        "--html",
        html,
        "--cases",
        EXAMPLES / "cases.jsonl",
    )
    assert code == 0, err
    result = json.loads((tmp_path / "cal" / "calibration.json").read_text("utf-8"))
    text = text_of(html.read_text("utf-8"))
    assert f"Gwet's AC1 {result['ac1']:.3f}" in text
    assert f"Krippendorff's alpha (nominal) {result['krippendorff_alpha']:.3f}" in text
    assert (
        f"corrected pass rate (Rogan-Gladen) {result['binary']['corrected_pass_rate']:.3f}" in text
    )
    provenance = text.split("Provenance")[-1]
    assert provenance.count(str(EXAMPLES / "cases.jsonl")) == 1


def test_a_retrieval_report_lists_its_figures_down_not_across(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "r.html"
    source = EXAMPLES / "rag" / "cases.jsonl"
    code, _, err = run(
        capsys, "grade", source, "--rubric", "retrieval", "-o", tmp_path / "r.jsonl", "--html", html
    )
    assert code == 0, err
    summary = html.read_text("utf-8").split("<h2>Summary</h2>")[1].split("</table>")[0]
    header = re.findall(r"<th>([^<]*)</th>", summary.split("</thead>")[0])
    assert header[0] == "figure" and "all cases" in header and len(header) <= 8
    assert "<td>recall at 5</td>" in summary and "<td>ndcg at 10</td>" in summary


# ---- the terminal -----------------------------------------------------------------------


def test_retrieval_table_heads_the_score_with_its_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = EXAMPLES / "rag" / "cases.jsonl"
    code, out, _ = run(capsys, "grade", source, "--rubric", "retrieval", "-o", tmp_path / "r.jsonl")
    assert code == 0
    header = next(line for line in out.splitlines() if "slice" in line)
    assert "recall@5" in header and "primary" not in header


def test_rag_benchmark_prints_each_criterion_and_what_fails_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary_path = tmp_path / "b.json"
    source = EXAMPLES / "rag" / "cases.jsonl"
    argv = ("grade", source, "--rubric", "rag-benchmark", "-o", tmp_path / "b.jsonl")
    code, out, _ = run(capsys, *argv, "--summary", summary_path)
    assert code == 0
    summary = json.loads(summary_path.read_text("utf-8"))
    for name, figures in summary["criteria"].items():
        key = "rate" if "rate" in figures else "mean"
        assert f"  {name}: {key} {figures[key]:.3f} ({figures['flag']})" in out
    assert (
        f"fails: {summary['fails']} graded below pass_at; "
        f"failed_questions: {summary['failed_questions']} the judge could not grade"
    ) in " ".join(out.split())


def test_a_labels_rubric_on_the_rules_judge_says_it_needs_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("grade", EXAMPLES / "cases.jsonl", "--rubric", "policy")
    code, out, _ = run(
        capsys, *argv, "--rubrics-dir", EXAMPLES / "rubrics", "-o", tmp_path / "p.jsonl"
    )
    assert code == 0
    flat = " ".join(out.split())
    assert "every case abstained: the offline rules judge cannot grade a 'labels' rubric" in flat


def test_align_on_rules_judge_records_warns_that_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = tmp_path / "g.jsonl"
    assert (
        run(capsys, "grade", EXAMPLES / "cases.jsonl", "--rubric", "faithfulness", "-o", graded)[0]
        == 0
    )
    code, _, err = run(
        capsys,
        "align",
        "--rubric",
        "faithfulness",
        "--labels",
        EXAMPLES / "human_labels.csv",
        "--records",
        graded,
        "--cases",
        EXAMPLES / "cases.jsonl",
        "--split",
        "test=0.3",
        "--rubrics-dir",
        tmp_path / "mine",
        "--test-labels",
        tmp_path / "test.jsonl",
    )
    assert code == 0, err
    assert "are the offline rules judge's, which reads no examples" in err


def test_plan_says_when_its_kappa_is_not_the_one_calibrate_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = tmp_path / "g.jsonl"
    assert (
        run(capsys, "grade", EXAMPLES / "cases.jsonl", "--rubric", "faithfulness", "-o", graded)[0]
        == 0
    )
    code, _, _ = run(
        capsys, "calibrate", graded, EXAMPLES / "human_labels.csv", "-o", tmp_path / "cal"
    )
    full = json.loads((tmp_path / "cal" / "calibration.json").read_text("utf-8"))
    code, out, err = run(capsys, "calibrate", graded, EXAMPLES / "human_labels.csv", "--plan")
    assert code == 0, err
    flat = " ".join(out.split())
    left_out = full["n"] - sum(full["binary"]["counts"].values())
    assert left_out > 0
    assert f"`judge calibrate` reports kappa {full['kappa']:.3f} over all {full['n']}" in flat
    assert f"{left_out} abstained or third-class cases are left out here" in flat


def test_p_values_below_a_thousandth_are_not_printed_as_zero() -> None:
    assert fmt_p(1.07e-7) == "< 0.001" and fmt_p(0.0004) == "< 0.001"
    assert fmt_p(0.0123) == "0.012" and fmt_p(None) == "n/a" and fmt_p(float("nan")) == "n/a"
    change = {
        "n": 117,
        "mean_score_change": -0.15,
        "mean_score_change_ci95": [-0.19, -0.10],
        "share_raised": 0.01,
        "share_raised_ci95": [0.0, 0.05],
        "share_lowered": 0.34,
        "wilcoxon_p_value": 1.07e-7,
    }
    report = {**change, "cases": 43, "strategies": ["courtesy"], "raised_ids": []}
    report["by_strategy"] = {"courtesy": change}
    markdown = _pointwise_markdown(report)
    all_row = next(line for line in markdown if line.startswith("| all |"))
    assert all_row.endswith("| < 0.001 |")


# ---- help and messages ------------------------------------------------------------------


def test_probe_help_prints_a_plain_percent_sign() -> None:
    text = PARSERS["probe"].format_help()
    assert "Wilson 95% interval" in text and "%%" not in text


@pytest.mark.parametrize("name", ["rubrics", "gate", "serve"])
def test_these_commands_describe_themselves(name: str) -> None:
    parser = PARSERS[name]
    assert parser.description and len(parser.description) > 40
    assert parser.description.split()[0] in parser.format_help()


def test_bare_judge_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([], env={})
    err = capsys.readouterr().err
    assert code == 2
    for name in ("grade", "calibrate", "probe", "serve", "label"):
        assert f"    {name} " in err


def test_label_help_exports_the_database_the_command_writes() -> None:
    from judge.cli._help import LABEL_EXAMPLES

    default = f"{(EXAMPLES / 'cases.jsonl').stem}.faithfulness.labels.sqlite"
    assert "judge label examples/cases.jsonl --rubric faithfulness" in LABEL_EXAMPLES
    assert f"judge label export --db {default} -o labels.csv" in LABEL_EXAMPLES


def test_testserver_help_keeps_its_examples_on_their_own_lines() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "judge.testserver", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert "\n    with FakeOpenAIServer(latency=0.1) as server:\n" in done.stdout
    assert "\n    python -m judge.testing.server --port 8099" in done.stdout


def test_csv_on_stdin_grades_without_input_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    csv_text = "id,question,contexts,answer\na,What?,The sky is blue.,The sky is blue.\n"
    stdin = io.TextIOWrapper(io.BytesIO(csv_text.encode()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    out = tmp_path / "s.jsonl"
    code, _, err = run(capsys, "grade", "-", "--rubric", "faithfulness", "-o", out)
    assert code == 0, err
    assert "not valid JSON" not in err and "read as CSV" in err
    assert json.loads(out.read_text("utf-8"))["id"] == "a"


def test_batch_status_of_an_unknown_batch_speaks_of_batches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        code, _, err = run(capsys, "batch", "status", "batch_nope", env=env)
    assert code == 2
    assert "knows no batch batch_nope" in err and "--model" not in err
    assert server.base_url.split("//")[1].split("/")[0] in err  # names the endpoint


def test_batch_status_names_the_endpoint_it_cannot_reach(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    env = {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "k"}
    code, _, err = run(capsys, "batch", "status", "batch_x", "--max-retries", "0", env=env)
    assert code == 1
    assert f"could not reach the Batch API at {url.rstrip('/')}" in err


def test_undo_means_the_same_in_the_docs_and_the_page() -> None:
    guide = (REPO / "docs/guides/labelling.md").read_text("utf-8")
    page = (REPO / "judge/label/static/label.html").read_text("utf-8")
    assert "`U` to undo your last action (a label or a skip)" in guide
    assert "undo the last label or skip" in page


def test_rubrics_verify_prints_no_blank_line_before_its_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    assert run(capsys, "rubrics", "new", "tone", "--kind", "scale", "--rubrics-dir", folder)[0] == 0
    assert run(capsys, "rubrics", "lock", "--rubrics-dir", folder)[0] == 0
    path = folder / "tone" / "v1.yaml"
    path.write_text(path.read_text("utf-8") + "\n# edited\n", "utf-8")
    code, out, err = run(capsys, "rubrics", "verify", "--rubrics-dir", folder)
    assert code == 2 and out == "" and err.startswith("error: ")


# ---- packaging --------------------------------------------------------------------------


def readme_root_outputs() -> set[str]:
    """What the README's and the docs' commands write in the repository root (their own
    names; a docs page's `$ ` prompts read as the commands they prefix)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    readme = "\n".join(p.read_text("utf-8") for p in pages).replace("\n$ ", "\n")
    flags = r"(?:-o|--summary|--json|--markdown|--html|--db|--test-labels|--export-batch)"
    found = set()
    elsewhere = False  # after a `cd` a block's commands write in another folder
    for line in readme.replace("\\\n", " ").splitlines():  # continued lines joined
        if line.startswith("```"):
            elsewhere = False
        elsewhere = elsewhere or bool(re.match(r"\s*cd |.*&& cd ", line))
        if elsewhere or not re.match(r"\s*(?:JUDGE_\w+=\S+ )?(?:judge|vllm) ", line):
            continue
        for name in re.findall(flags + r" ([\w./-]+)", line):
            if name.startswith("-"):  # a flag after a flag that takes none (`--json -o`)
                continue
            if not name.startswith(("examples/", "tests/", "/")) and "FILE" not in name:
                found.add(name.split("/")[0] + ("/" if "/" in name else ""))
    return found


def test_the_gitignore_lists_every_file_the_readme_writes_in_the_root() -> None:
    patterns = [
        line.strip()
        for line in (REPO / ".gitignore").read_text("utf-8").splitlines()
        if line.strip().startswith("/")
    ]
    outputs = readme_root_outputs()
    assert {"graded.jsonl", "benchmark.json", "gate.md", "tone.jsonl", "runs/"} <= outputs
    unlisted = sorted(
        name
        for name in outputs
        if not any(fnmatch("/" + name.rstrip("/"), p.rstrip("/")) for p in patterns)
    )
    assert unlisted == []


@pytest.mark.parametrize(
    "argv",
    [
        ("grade", "{missing}", "--rubric", "faithfulness", "-o", "{notes}"),
        ("grade", "{missing}", "--rubric", "faithfulness,relevance", "-o", "{notes}"),
        ("grade", "{missing}", "--rubric", "faithfulness", "-o", "{notes}", "--summary", "{notes}"),
        ("probe", "verbosity", "{missing}", "--rubric", "faithfulness", "-o", "{notes}"),
    ],
)
def test_a_missing_input_is_said_before_any_complaint_about_the_outputs(
    argv: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not ours\n", "utf-8")
    missing = tmp_path / "nothere.jsonl"
    filled = [a.format(missing=missing, notes=notes) for a in argv]
    code, _, err = run(capsys, *filled)
    assert code == 2
    assert err.strip().splitlines()[-1] == f"error: {missing}: no such file"
    assert notes.read_text("utf-8") == "not ours\n"
