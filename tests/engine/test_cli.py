"""The CLI's own behaviour: rubric listing, the one-line judge notice, usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli import main
from judge.rubric import load_rubric
from tests.helpers import case, read_jsonl, write_jsonl


def test_rubrics_lists_every_released_rubric_with_its_hash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rubrics"], env={}) == 0
    out = capsys.readouterr().out
    for ref in ("faithfulness", "relevance", "pairwise"):
        rubric = load_rubric(ref)
        rows = [line.split() for line in out.splitlines()]  # columns as wide as the longest id
        assert [rubric.id, "1", rubric.kind, rubric.sha256[:12]] in rows


def test_rubrics_show_prints_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rubrics", "show", "relevance@1"], env={}) == 0
    out = capsys.readouterr().out
    assert load_rubric("relevance@1").sha256 in out and "abstained" in out
    assert main(["rubrics", "show", "relevance@9"], env={}) == 2
    assert main(["rubrics", "verify"], env={}) == 0


def test_offline_grade_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    out = tmp_path / "out.jsonl"
    assert main(["grade", str(source), "--rubric", "faithfulness", "-o", str(out)], env={}) == 0
    err = capsys.readouterr().err
    notices = [line for line in err.splitlines() if "offline rules judge" in line]
    assert len(notices) == 1
    assert read_jsonl(out)[0]["judge"]["model"] == "rules"


def test_offline_flag_wins_over_a_configured_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    env = {"JUDGE_MODEL": "gpt-4o", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert (
        main(
            [
                "grade",
                str(source),
                "--rubric",
                "relevance",
                "-o",
                str(tmp_path / "o.jsonl"),
                "--offline",
            ],
            env=env,
        )
        == 0
    )
    assert "offline rules judge" in capsys.readouterr().err


def test_unpinned_model_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judge.cli._common import announce_judge
    from judge.config import JudgeConfig

    announce_judge(JudgeConfig(model="gpt-4o"))
    assert "not pinned" in capsys.readouterr().err
    for pinned in ("gpt-4o-2024-08-06", "llama3.1:8b-instruct-q4_0", "claude-3-5-sonnet-20241022"):
        announce_judge(JudgeConfig(model=pinned))
        assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "0"], "--limit must be at least 1"),
        (["--temperature", "9"], "--temperature: input should be less than or equal to 2"),
        (["--concurrency", "0"], "--concurrency: input should be greater than or equal to 1"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    assert main(["grade", str(source), "--rubric", "faithfulness", *args], env={}) == 2
    assert message in capsys.readouterr().err.lower()


def test_output_may_not_overwrite_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", [case("a")])
    before = source.read_bytes()
    assert main(["grade", str(source), "--rubric", "faithfulness", "-o", str(source)], env={}) == 2
    assert source.read_bytes() == before


@pytest.mark.parametrize(
    ("model", "base_url"),
    [
        ("smollm2", "http://127.0.0.1:8080/v1"),  # loopback
        ("llama3", "http://[::1]:11434/v1"),
        ("llama3", "http://192.168.1.20:8000/v1"),  # private
        ("llama3", "http://localhost:8000/v1"),
        ("meta-llama/Llama-3.1-8B-Instruct", "https://vllm.internal.example.org/v1"),
        ("/models/SmolLM2-135M-Instruct-Q4_1.gguf", None),  # a file: as pinned as it gets
        ("smollm2.gguf", "https://api.openai.com/v1"),
    ],
)
def test_no_pinning_warning_for_a_self_hosted_server_or_a_model_file(
    model: str, base_url: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.cli._common import announce_judge
    from judge.config import JudgeConfig

    announce_judge(JudgeConfig(model=model, base_url=base_url))
    assert capsys.readouterr().err == ""


def test_a_hosted_alias_still_warns(capsys: pytest.CaptureFixture[str]) -> None:
    from judge.cli._common import announce_judge
    from judge.config import JudgeConfig

    for url in ("https://api.openai.com/v1", "https://x.openai.azure.com/openai", None):
        announce_judge(JudgeConfig(model="gpt-4o", base_url=url))
        assert "not pinned" in capsys.readouterr().err
