"""Held-out (issue 51, item 3): an agent traced the usual first way, the openai SDK
instrumented alone (openinference-instrumentation-openai; one trace a model call, no agent
span, no tool spans, no session id), pulls as one conversation a session, equal to the
conversations of the same sessions traced with an agent span (and with tool spans); spans
sharing a session id (OpenInference) or gen_ai.conversation.id (GenAI) are one conversation.
The pull says what it put together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openinference.instrumentation import using_session

from judge.cli import main
from tests.helpers import read_jsonl, write_jsonl
from tests.traces import sdk_agent_support as agents
from tests.traces.otlp_support import rag_provider, write_otlp

FIELDS = ("messages", "goal", "tools")


def _pulled(tmp_path: Path, name: str, spans: list, *extra: str) -> list[dict[str, Any]]:
    source, out = tmp_path / f"{name}.otlp.jsonl", tmp_path / f"{name}.cases.jsonl"
    write_otlp(source, spans)
    assert main(["traces", "pull", "--otlp", str(source), "-o", str(out), *extra]) == 0
    return read_jsonl(out)


@pytest.fixture(scope="module")
def traced() -> dict[str, list]:
    return {
        "sdk": agents.run_sessions(),
        "agent": agents.run_sessions(with_agent_span=True),
        "tools": agents.run_sessions(with_agent_span=True, with_tool_spans=True),
    }


def test_sdk_only_sessions_pull_as_the_agent_span_conversations(tmp_path, traced, capsys) -> None:
    assert len({s.context.trace_id for s in traced["sdk"]}) == len(traced["sdk"]) == 28
    sdk = _pulled(tmp_path, "sdk", traced["sdk"])
    said = capsys.readouterr().out
    assert "traces: 10 cases from" in said
    assert "traces: grouped 28 traces into 10 conversations by their messages" in said
    for shape in ("agent", "tools"):
        whole = _pulled(tmp_path, shape, traced[shape])
        assert len(sdk) == len(whole) == 10
        assert [{f: c.get(f) for f in FIELDS} for c in sdk] == [
            {f: c.get(f) for f in FIELDS} for c in whole
        ]
    # and each is the session as run: its question, every call answered, its final answer
    for case, session in zip(sdk, agents.sessions(), strict=True):
        assert case["goal"] == session.question
        made = [c["function"]["name"] for m in case["messages"] for c in m.get("tool_calls") or []]
        assert made == [name for turn in session.turns for name, _ in turn]
        assert sum(m["role"] == "tool" for m in case["messages"]) == len(made)
        assert case["messages"][-1] == {"role": "assistant", "content": session.answer}
        assert case["metadata"]["grouped_by"] == "messages"
        assert case["metadata"]["traces"] == len(session.turns) + 1


def test_a_trajectory_rubric_gets_the_same_ten(tmp_path, traced) -> None:
    plain = _pulled(tmp_path, "plain", traced["sdk"])
    ruled = _pulled(tmp_path, "ruled", traced["sdk"], "--rubric", "trajectory")
    assert [c["messages"] for c in plain] == [c["messages"] for c in ruled]


def test_one_model_call_alone_is_still_a_question_and_answer(tmp_path) -> None:
    provider, exporter = rag_provider("one-call")
    with agents.instrumented(provider) as (client, server):
        server.script(agents.Reply(content="Paris."))
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Capital of France?"}]
        )
    (case,) = _pulled(tmp_path, "one", list(exporter.get_finished_spans()))
    assert case["question"] == "Capital of France?" and case["answer"] == "Paris."


def test_a_session_id_makes_one_conversation_where_messages_cannot(tmp_path) -> None:
    # every session asks the same and gets the same first reply, then a follow-up turn:
    # only the session id tells them apart
    provider, exporter = rag_provider("chat")
    with agents.instrumented(provider) as (client, server):
        for n in range(3):
            with using_session(f"chat-{n}"):
                history = [{"role": "user", "content": "Hi"}]
                for turn in range(2):
                    server.script(agents.Reply(content=f"answer {turn}"))
                    reply = client.chat.completions.create(model="m", messages=history)
                    history += [
                        {"role": "assistant", "content": reply.choices[0].message.content},
                        {"role": "user", "content": f"and {n}?"},
                    ]
    cases = _pulled(tmp_path, "chat", list(exporter.get_finished_spans()))  # --as auto
    assert [c["metadata"]["session.id"] for c in cases] == ["chat-0", "chat-1", "chat-2"]
    assert [c["metadata"]["grouped_by"] for c in cases] == ["session.id"] * 3
    assert [m["content"] for m in cases[1]["messages"]] == ["Hi", "answer 0", "and 1?", "answer 1"]


def test_gen_ai_conversation_id_groups_genai_spans(tmp_path) -> None:
    provider, exporter = rag_provider("genai")
    tracer = provider.get_tracer("genai")
    history: list[dict] = []
    for turn in range(3):
        history.append({"role": "user", "parts": [{"type": "text", "content": f"q{turn}"}]})
        with tracer.start_as_current_span("chat") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.conversation.id", "conv-7")
            span.set_attribute("gen_ai.input.messages", json.dumps(history))
            reply = {"role": "assistant", "parts": [{"type": "text", "content": f"a{turn}"}]}
            span.set_attribute("gen_ai.output.messages", json.dumps([reply]))
        history.append(reply)
    (case,) = _pulled(
        tmp_path, "genai", list(exporter.get_finished_spans()), "--as", "conversations"
    )
    assert [m["content"] for m in case["messages"]] == ["q0", "a0", "q1", "a1", "q2", "a2"]
    assert case["metadata"]["gen_ai.conversation.id"] == "conv-7"


def test_references_join_onto_pulled_conversations_and_watch(tmp_path, traced, capsys) -> None:
    sdk = _pulled(tmp_path, "sdk", traced["sdk"])
    goals = [c["goal"] for c in sdk]
    unique = [g for g in goals if goals.count(g) == 1]
    refs = write_jsonl(
        tmp_path / "refs.jsonl",
        [{"goal": c["goal"], "expected_tool_calls": _calls(c)} for c in sdk if c["goal"] in unique],
    )
    joined = _pulled(
        tmp_path, "joined", traced["sdk"], "--references", str(refs), "--join-on", "goal"
    )
    assert [c.get("expected_tool_calls") is not None for c in joined] == [
        g in unique for g in goals
    ]
    out = capsys.readouterr().out
    assert f"references: {len(unique)} cases joined by goal from refs.jsonl" in out
    assert f"{len(goals) - len(unique)} with a key no reference has" in out
    folder = tmp_path / "watch"
    source = tmp_path / "sdk.otlp.jsonl"
    argv = ["watch", "--otlp", str(source), "--rubric", "trajectory", "-o", str(folder), "--once"]
    assert main([*argv, "--references", str(refs), "--join-on", "goal"]) == 0
    said = capsys.readouterr().out
    assert f"graded {len(unique)}" in said and f"no_reference {len(goals) - len(unique)}" in said
    records = read_jsonl(folder / "trajectory.jsonl")
    assert sorted(r["label"] for r in records if r["status"] == "ok") == ["match"] * len(unique)


def test_watch_says_when_every_case_abstained(tmp_path, traced, capsys) -> None:
    source = tmp_path / "sdk.otlp.jsonl"
    write_otlp(source, traced["sdk"])
    argv = ["watch", "--otlp", str(source), "--rubric", "trajectory", "-o", str(tmp_path / "w")]
    assert main([*argv, "--once"]) == 0
    said = capsys.readouterr()
    assert "watch: abstained 10; records:" in said.out and "graded" not in said.out
    assert "every one of the 10 cases decided abstained" in said.err


def _calls(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for m in case["messages"]
        for c in m.get("tool_calls") or []
    ]
