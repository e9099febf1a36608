"""Agent traces in as conversation cases (issue 43, item 4): `judge traces pull` and `judge
watch` turn one agent trace, in OpenInference's conventions or the GenAI ones, into one
case whose messages hold the tool calls in order, each answered by its tool's result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.schemas import Case
from judge.traces.pull import pull_otlp
from tests.traces.agent_support import (
    FINAL,
    QUESTION,
    STEPS,
    SYSTEM,
    TOOL_SCHEMAS,
    trace_genai,
    trace_openinference,
)
from tests.traces.otlp_support import REQUESTS, rag_provider, trace_request, write_otlp
from tests.traces.phoenix_agent_fake import agent_phoenix

CONVENTIONS = {"openinference": trace_openinference, "genai": trace_genai}
RUBRIC = """id: agent-goal
version: 1
kind: scale
title: Did the agent do what the user asked?
inputs: [goal, messages]
scale: {min: 1, max: 5, pass_at: 4}
system: |
  You rate whether the agent's conversation achieved the user's goal.
"""


def _agent_file(tmp_path: Path, trace: Callable[..., tuple[str, str]], **options: Any):
    provider, exporter = rag_provider("agent-app")
    ids = trace(provider, **options)
    path = tmp_path / "agent.otlp.jsonl"
    write_otlp(path, exporter.get_finished_spans())
    return path, ids


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _calls_and_answers(messages: list[dict[str, Any]]) -> list[tuple[str, dict, str]]:
    """(tool name, arguments, result) of each call, its result read from the tool message
    that answers it; every tool message must come after the call it names."""
    calls: dict[str, tuple[str, dict]] = {}
    out = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            calls[call["id"]] = (
                call["function"]["name"],
                json.loads(call["function"]["arguments"]),
            )
        if message["role"] == "tool":
            name, arguments = calls.pop(message["tool_call_id"])
            assert message["name"] == name
            out.append((name, arguments, message["content"]))
    assert not calls, f"calls with no result: {calls}"
    return out


EXPECTED = [(s.name, s.arguments, s.result) for s in STEPS]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("ids", [True, False], ids=["call-ids", "no-call-ids"])
def test_an_agent_trace_is_one_conversation(tmp_path, convention, ids) -> None:
    path, (trace_id, root) = _agent_file(tmp_path, CONVENTIONS[convention], ids=ids)
    out = tmp_path / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(out)]) == 0
    (line,) = _lines(out)
    case = Case.model_validate(line)  # the file's line is a valid case, tool order included
    assert case.id == root and case.goal == QUESTION
    assert case.metadata == {"trace_id": trace_id, "span_id": root, "response_id": "chatcmpl-final"}
    assert [(m["role"], m.get("content")) for m in line["messages"][:2]] == [
        ("system", SYSTEM),
        ("user", QUESTION),
    ]
    assert _calls_and_answers(line["messages"]) == EXPECTED
    assert line["messages"][-1] == {"role": "assistant", "content": FINAL}
    assert line["tools"] == TOOL_SCHEMAS
    if ids:  # the trace's own call ids are kept
        calls = [c["id"] for m in line["messages"] for c in m.get("tool_calls") or []]
        assert calls == [s.call_id for s in STEPS]


def test_made_up_call_ids_are_the_same_every_pull(tmp_path) -> None:
    path, _ = _agent_file(tmp_path, trace_openinference, ids=False)
    first, second = pull_otlp(path).cases, pull_otlp(path).cases
    assert first == second
    assert first[0].messages and first[0].messages[2].tool_calls


def test_rag_traces_still_give_answers_beside_an_agent_trace(tmp_path) -> None:
    """Auto: the RAG trace (no tool or agent span) is a question/answer case, the agent
    trace a conversation; `--as answers` makes the agent trace a question/answer case too
    (its root's input and output), and so does a rubric that reads question and answer."""
    provider, exporter = rag_provider()
    _, rag = trace_request(provider, REQUESTS[0])
    _, agent = trace_openinference(provider)
    path = tmp_path / "mixed.jsonl"
    write_otlp(path, exporter.get_finished_spans())
    out = tmp_path / "cases.jsonl"
    assert main(["traces", "pull", "--otlp", str(path), "-o", str(out)]) == 0
    by_id = {c["id"]: c for c in _lines(out)}
    assert by_id[rag]["answer"] == REQUESTS[0].answer and "messages" not in by_id[rag]
    assert by_id[agent]["messages"] and "answer" not in by_id[agent]
    for extra in (["--as", "answers"], ["--rubric", "relevance"]):
        assert main(["traces", "pull", "--otlp", str(path), *extra, "-o", str(out)]) == 0
        by_id = {c["id"]: c for c in _lines(out)}
        assert (by_id[agent]["question"], by_id[agent]["answer"]) == (QUESTION, FINAL)
    assert (
        main(["traces", "pull", "--otlp", str(path), "--as", "conversations", "-o", str(out)]) == 0
    )
    by_id = {c["id"]: c for c in _lines(out)}
    assert by_id[rag]["messages"] == [
        {"role": "user", "content": REQUESTS[0].question},
        {"role": "assistant", "content": REQUESTS[0].answer},
    ]


@pytest.fixture
def rubrics(tmp_path: Path) -> Path:
    folder = tmp_path / "rubrics"
    (folder / "agent-goal").mkdir(parents=True)
    (folder / "agent-goal" / "v1.yaml").write_text(RUBRIC)
    return folder


def _judge_args(server: Any, rubrics: Path) -> list[str]:
    return ["--rubrics-dir", str(rubrics), "--base-url", server.base_url, "--model", server.model]


def test_grade_shows_the_judge_the_messages(tmp_path, rubrics, server_factory) -> None:
    """A rubric reading `goal` and `messages` grades the pulled case; the judge is sent the
    whole transcript, tool calls and results included."""
    server = server_factory()
    path, (_, root) = _agent_file(tmp_path, trace_genai)
    cases, graded = tmp_path / "cases.jsonl", tmp_path / "graded.jsonl"
    argv = ["traces", "pull", "--otlp", str(path), "--rubric", "agent-goal", "-o", str(cases)]
    assert main([*argv, "--rubrics-dir", str(rubrics)]) == 0
    env = {"OPENAI_API_KEY": "test-key", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    argv = ["grade", str(cases), "--rubric", "agent-goal", "-o", str(graded)]
    assert main([*argv, *_judge_args(server, rubrics)], env=env) == 0
    (record,) = _lines(graded)
    assert (record["id"], record["status"]) == (root, "ok")
    shown = json.dumps(list(server.stats.bodies)[-1])
    for step in STEPS:
        assert step.name in shown and "K7Q2" in shown


def test_watch_grades_one_conversation(tmp_path, rubrics, server_factory) -> None:
    server = server_factory()
    path, (_, root) = _agent_file(tmp_path, trace_openinference)
    folder = tmp_path / "watch"
    argv = ["watch", "--otlp", str(path), "--rubric", "agent-goal", "-o", str(folder), "--once"]
    env = {"OPENAI_API_KEY": "test-key", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert main([*argv, *_judge_args(server, rubrics)], env=env) == 0
    (record,) = _lines(folder / "agent-goal.jsonl")
    assert (record["id"], record["status"]) == (root, "ok")
    assert main([*argv, *_judge_args(server, rubrics)], env=env) == 0  # nothing new
    assert len(_lines(folder / "agent-goal.jsonl")) == 1


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_phoenix_pull_gives_the_same_case(tmp_path, convention) -> None:
    """Phoenix's REST form (span kind apart, ISO start times, pages) maps as OTLP does."""
    provider, exporter = rag_provider("agent-app")
    CONVENTIONS[convention](provider)
    spans = exporter.get_finished_spans()
    path = tmp_path / "agent.jsonl"
    write_otlp(path, spans)
    out = tmp_path / "cases.jsonl"
    with agent_phoenix("agents", spans) as phoenix:
        argv = ["traces", "pull", "--phoenix", phoenix.url, "--project", "agents"]
        assert main([*argv, "-o", str(out)]) == 0
        assert phoenix.requests > 1  # it paged
    (from_phoenix,) = _lines(out)
    (from_otlp,) = [c.model_dump(mode="json", exclude_defaults=True) for c in pull_otlp(path).cases]
    assert from_phoenix == from_otlp
    assert _calls_and_answers(from_phoenix["messages"]) == EXPECTED


def test_the_shipped_example_gives_two_conversations_and_one_answer(tmp_path) -> None:
    """examples/traces/agent.otlp.jsonl, which the guide pulls and grades."""
    extraction = pull_otlp(Path(__file__).parents[2] / "examples" / "traces" / "agent.otlp.jsonl")
    shapes = [("messages" if c.messages else "answer") for c in extraction.cases]
    assert shapes == ["messages", "messages", "answer"] and not extraction.missing
    for case in extraction.cases[:2]:
        dumped = [m.model_dump(exclude_none=True) for m in case.messages or []]
        assert _calls_and_answers(dumped) == EXPECTED


def test_watch_on_phoenix_grades_one_conversation(tmp_path, rubrics, server_factory) -> None:
    server = server_factory()
    provider, exporter = rag_provider("agent-app")
    _, root = trace_genai(provider)
    folder = tmp_path / "watch"
    with agent_phoenix("agents", exporter.get_finished_spans()) as phoenix:
        argv = ["watch", "--phoenix", phoenix.url, "--project", "agents", "--once"]
        argv += ["--settle-seconds", "0", "--rubric", "agent-goal", "-o", str(folder)]
        env = {"OPENAI_API_KEY": "test-key", "XDG_CACHE_HOME": str(tmp_path / "cache")}
        assert main([*argv, *_judge_args(server, rubrics)], env=env) == 0
    (record,) = _lines(folder / "agent-goal.jsonl")
    assert (record["id"], record["status"]) == (root, "ok")
