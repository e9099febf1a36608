"""Issue 16 items 2 and 4: the exit code of `judge grade` follows DESIGN.md ("Exit codes"),
and every gate expression is checked before the first request."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from calibration.decisions.gates import parse_condition
from judge.cli import main
from judge.engine.measure.run_gates import check_conditions, grade_metric_names
from judge.probes import probe_metric_names
from judge.rubric import load_rubric
from judge.testing import ChatRequest, FakeOpenAIServer, Reply, default_verdict
from tests.helpers import REPO, case, read_jsonl, write_jsonl

# every command's exit code, many of them in a subprocess (.ci/slow runs it)
pytestmark = pytest.mark.slow

EXAMPLES = REPO / "examples"
MODEL = "judge-test-2024-01-01"


def closed_port() -> int:
    """A loopback port nothing listens on (connections are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def grade(*args: str, env: dict[str, str] | None = None) -> int:
    return main(["grade", *args], env=env or {})


def broken_when_marked(chat: ChatRequest) -> Reply | dict[str, Any]:
    """Unparseable (twice: the repair too) for cases whose text says BREAK."""
    if "BREAK" in chat.case_text:
        return Reply(content="{broken")
    return default_verdict(chat)


# ---- item 2: a run where cases failed ----


def test_every_case_failing_exits_1_with_the_commonest_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """The README's model block against an unreachable endpoint: before the fix, exit 0
    with 43 api_error records and no message."""
    caplog.set_level("WARNING")
    out = tmp_path / "graded.jsonl"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    args = [str(EXAMPLES / "cases.jsonl"), "--rubric", "faithfulness@1", "-o", str(out)]
    args += ["--model", "gpt-4o-2024-08-06", "--base-url", url, "--max-retries", "0"]
    assert grade(*args, "--no-cache") == 1
    err = capsys.readouterr().err
    failure = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(failure) == 1
    assert "the run failed: 43 of 43 cases failed (api_error 43)" in failure[0]
    assert "commonest cause (43 cases): connection failed" in failure[0]
    assert f"kept in {out}" in failure[0]
    records = read_jsonl(out)
    assert len(records) == 43 and {r["status"] for r in records} == {"api_error"}
    # said once while it happens, not once per case
    assert caplog.text.count("cannot connect to http://127.0.0.1") == 1


@pytest.mark.parametrize(
    ("broken", "extra", "code"),
    [
        (0, [], 0),
        (1, [], 0),  # 1 of 20 = 0.05: not more than the default 0.05
        (2, [], 1),  # 0.10
        (2, ["--max-error-rate", "0.1"], 0),
        (20, ["--max-error-rate", "1"], 1),  # every case failing always fails the run
    ],
)
def test_more_failed_cases_than_the_max_error_rate_exits_1(
    tmp_path: Path,
    server_factory: Callable[..., FakeOpenAIServer],
    capsys: pytest.CaptureFixture[str],
    broken: int,
    extra: list[str],
    code: int,
) -> None:
    server = server_factory(responder=broken_when_marked)
    rows = [case(f"c{i:02d}", answer=f"The trial lasts 14 days.{' BREAK' * (i < broken)}")
            for i in range(20)]  # fmt: skip
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    env = {"OPENAI_BASE_URL": server.base_url, "JUDGE_MODEL": MODEL}
    assert grade(str(source), "--rubric", "faithfulness", "-o", str(out), "--no-cache",
                 *extra, env=env) == code  # fmt: skip
    assert len(read_jsonl(out)) == 20  # the records stay either way
    err = capsys.readouterr().err
    assert ("the run failed" in err) == (code == 1)
    if code == 1:
        assert f"{broken} of 20 cases failed (parse_error {broken}" in err
        assert f"commonest cause ({broken} cases): after one repair: not valid JSON" in err


def test_fail_if_gates_on_the_summary_with_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    base = [str(EXAMPLES / "cases.jsonl"), "--rubric", "faithfulness", "-o", str(out)]
    base += ["--summary", str(summary)]
    assert grade(*base, "--fail-if", "answer_hallucination_rate > 0.99") == 0
    values = json.loads(summary.read_text())
    assert grade(*base, "--fail-if", "error_rate > 0", "--fail-if", "mean_score < 0.99") == 3
    err = capsys.readouterr().err
    assert "gate: error_rate > 0: 0 -> ok" in err
    assert f"gate: mean_score < 0.99: {values['mean_score']:g} -> failed" in err
    written = json.loads(summary.read_text())  # the run's outputs are all written
    assert written["run"]["kept"] == 43 and written["run"]["graded"] == 0  # what this run did
    assert {k: v for k, v in written.items() if k != "run"} == {
        k: v for k, v in values.items() if k != "run"
    }
    assert len(read_jsonl(out)) == 43


def test_a_gate_that_cannot_be_computed_fails(tmp_path: Path) -> None:
    """Every case abstains: the mean score is undefined, which is no evidence of quality."""
    rows = [case(f"a{i}", answer="I don't know.") for i in range(3)]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    args = [str(source), "--rubric", "faithfulness", "-o", str(tmp_path / "o.jsonl")]
    assert grade(*args, "--fail-if", "mean_score < 0.5") == 3


def test_bad_error_rate_is_usage(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    assert grade(str(source), "--rubric", "faithfulness", "--max-error-rate", "1.5") == 2
    assert not (tmp_path / "in.faithfulness.jsonl").exists()


# ---- item 4: gate expressions are checked before anything is sent ----


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("mean_scroe < 0.8", "no metric 'mean_scroe'"),
        ("mean_score << 0.8", "expected METRIC OP NUMBER"),
        ("mean_score < 1.2.3", "expected METRIC OP NUMBER"),
        ("mean_relevance < 3", "no metric 'mean_relevance'"),  # a relevance name
    ],
)
def test_a_grade_gate_typo_exits_2_before_any_request(
    tmp_path: Path,
    openai_server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    expr: str,
    says: str,
) -> None:
    """Before the fix a typo was reported after every request had been paid for."""
    out = tmp_path / "out.jsonl"
    env = {"OPENAI_BASE_URL": openai_server.base_url, "JUDGE_MODEL": MODEL}
    args = [str(EXAMPLES / "cases.jsonl"), "--rubric", "faithfulness", "-o", str(out)]
    assert grade(*args, "--fail-if", expr, env=env) == 2
    assert openai_server.stats.requests == 0 and not out.exists()
    err = capsys.readouterr().err
    assert says in err
    if "no metric" in says:
        assert "valid names:" in err and "claim_hallucination_rate" in err


def test_a_probe_gate_typo_exits_2_before_any_request(
    tmp_path: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"OPENAI_BASE_URL": openai_server.base_url, "JUDGE_MODEL": MODEL}
    args = ["probe", "repeat", str(EXAMPLES / "cases.jsonl"), "--rubric", "relevance"]
    args += ["-o", str(tmp_path / "r.json"), "--fail-if", "exact_agreement < 0.9"]
    assert main(args, env=env) == 2
    assert openai_server.stats.requests == 0
    err = capsys.readouterr().err
    assert "the repeat probe has no metric 'exact_agreement'" in err
    assert "exact_agreement_rate" in err


def test_the_grade_gate_names_follow_the_summary() -> None:
    assert {"mean_score", "error_rate", "failed", "status.api_error"} <= grade_metric_names(
        load_rubric("relevance")
    )
    assert "claim_hallucination_rate" in grade_metric_names(load_rubric("faithfulness"))
    assert {"win_rates.A", "win_rates.tie"} <= grade_metric_names(load_rubric("pairwise"))
    assert parse_condition(" flip_rate>=1e-3 ", {"flip_rate"}).threshold == 0.001
    with pytest.raises(Exception, match="valid names: a, b"):
        check_conditions(["c > 1"], {"a", "b"}, what="x")


def probe_numbers(report: dict[str, Any], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for key, value in report.items():
        if key in ("gate", "spread_by_case") or key.endswith("_ci95"):  # per case; intervals
            continue
        if isinstance(value, dict):
            out |= probe_numbers(value, f"{prefix}{key}.")
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            out.add(f"{prefix}{key}")
    return out


@pytest.mark.parametrize(
    ("kind", "source", "rubric", "extra"),
    [
        ("position", "pairs.jsonl", "pairwise", []),
        ("verbosity", "cases.jsonl", "faithfulness", []),
        ("repeat", "cases.jsonl", "relevance", ["--repeats", "2"]),
        ("injection", "cases.jsonl", "faithfulness", []),
        (
            "self-preference",
            "pairs.jsonl",
            "pairwise",
            ["--human", "examples/human_pairs.csv", "--judge-family", "openai"],
        ),
    ],
)
def test_the_probe_gate_names_are_the_reports_numbers(
    tmp_path: Path, kind: str, source: str, rubric: str, extra: list[str]
) -> None:
    """The names a probe gate accepts up front are exactly the numbers its report holds
    (a new report field without a name here fails this test)."""
    out = tmp_path / "p.json"
    args = ["probe", kind, str(EXAMPLES / source), "--rubric", rubric, "-o", str(out)]
    extra = [str(REPO / e) if e.startswith("examples/") else e for e in extra]
    assert main([*args, *extra], env={}) == 0
    report = json.loads(out.read_text())
    found = probe_numbers(report)
    names = probe_metric_names(kind)
    assert found - names == set()
    # the declared top-level names all appear (status counts appear only when seen)
    assert {n for n in names if not n.startswith("status.")} - found == set()


def test_a_probe_whose_every_verdict_failed_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    args = ["probe", "repeat", str(EXAMPLES / "cases.jsonl"), "--rubric", "relevance"]
    args += ["--repeats", "2", "-o", str(tmp_path / "r.json"), "--model", MODEL]
    assert main([*args, "--base-url", url, "--max-retries", "0"], env={}) == 1
    err = capsys.readouterr().err
    assert "the probe failed: every one of its 86 verdicts failed (api_error 86)" in err
    assert (tmp_path / "r.json").exists()  # the report is kept
