"""Phoenix that misbehaves (a stand-in on loopback): every pull and push ends, in bounded
time and memory, with one line saying what was refused; nothing not stored is counted as
stored; a password in the URL is never printed."""

from __future__ import annotations

import itertools
import json

import pytest

from judge.cli import main
from judge.traces.phoenix import Limits, PhoenixClient, PhoenixError
from tests.helpers import ends as _ends
from tests.traces.phoenix_fake import Answer, FakePhoenix, json_answer, phoenix_span


def _pull(url: str, tmp_path, *extra: str) -> int:
    argv = ["traces", "pull", "--phoenix", url, "--project", "shop-bot"]
    return main([*argv, "-o", str(tmp_path / "cases.jsonl"), *extra])


def test_an_endless_cursor_stops_at_the_page_cap() -> None:
    counter = itertools.count()

    def route(method, path, query, body) -> Answer:
        n = next(counter)
        spans = [phoenix_span(f"{n:08x}{k:08x}", f"{n:032x}") for k in range(3)]
        return json_answer({"data": spans, "next_cursor": f"page-{n + 1}"})

    with FakePhoenix(route) as fake, PhoenixClient(fake.url, limits=Limits(pull_pages=7)) as c:
        with pytest.raises(PhoenixError, match="over 7 pages"):
            _ends(lambda: sum(1 for _ in c.spans("shop-bot")))
        assert fake.requests == 7


def test_an_endless_cursor_stops_at_the_byte_cap() -> None:
    big = "x" * 20_000

    def route(method, path, query, body) -> Answer:
        n = int(query.get("cursor", ["0"])[0]) + 1
        span = phoenix_span(f"{n:016x}", f"{n:032x}", attributes={"input.value": big})
        return json_answer({"data": [span], "next_cursor": str(n)})

    limits = Limits(pull_bytes=100_000)
    with FakePhoenix(route) as fake, PhoenixClient(fake.url, limits=limits) as client:
        with pytest.raises(PhoenixError, match="over 100000 bytes in one pull"):
            _ends(lambda: list(client.spans("shop-bot")))
        assert fake.requests <= 6


def test_a_repeated_cursor_is_refused_in_one_line(tmp_path, capsys) -> None:
    cursors = itertools.cycle(["c-1", "c-2", "c-3"])

    def route(method, path, query, body) -> Answer:
        return json_answer({"data": [], "next_cursor": next(cursors)})

    with FakePhoenix(route) as fake:
        assert _ends(lambda: _pull(fake.url, tmp_path)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gave the cursor 'c-1' twice" in err[0]
    assert not (tmp_path / "cases.jsonl").exists()


def test_a_dripping_body_has_a_deadline() -> None:
    """One byte every 20 ms for ever: each read is quick, the answer never whole."""

    def route(method, path, query, body) -> Answer:
        return Answer(body=itertools.repeat(b" "), pause=0.02)

    limits = Limits(answer_seconds=0.2)
    with (
        FakePhoenix(route) as fake,
        PhoenixClient(fake.url, limits=limits) as client,
        pytest.raises(PhoenixError, match="no whole answer in time"),
    ):
        _ends(lambda: list(client.spans("shop-bot")))


def test_a_huge_answer_is_refused_by_size() -> None:
    def route(method, path, query, body) -> Answer:
        return Answer(body=itertools.repeat(b"[" * 4096))

    with FakePhoenix(route) as fake:
        client = PhoenixClient(fake.url, limits=Limits(answer_bytes=300_000))
        with client, pytest.raises(PhoenixError, match="an answer over 300000 bytes"):
            _ends(lambda: list(client.spans("shop-bot")))


@pytest.mark.parametrize(
    "body",
    [
        b"<html><body>Sign in</body></html>",
        b"\xff\xfe\x00garbage",
        b'{"data": ' + b"[" * 3000 + b"]" * 3000 + b"}",
        b'{"data": [], "n": ' + b"7" * 5000 + b"}",
    ],
    ids=["html", "not-utf8", "deep", "5000-digits"],
)
def test_an_answer_that_is_not_json_is_one_line_exit_2(body, tmp_path, capsys) -> None:
    def route(method, path, query, _body) -> Answer:
        return Answer(body=body, headers={"Content-Type": "text/html"})

    with FakePhoenix(route) as fake:
        assert _pull(fake.url, tmp_path) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the answer is not JSON" in err[0], err


def test_spans_without_context_are_skipped_and_counted(tmp_path, capsys) -> None:
    good = phoenix_span("a1" * 8, "b2" * 16)
    broken = [
        {"name": "no context", "attributes": {}},
        {"context": {"trace_id": 5, "span_id": None}},
        {"context": {"trace_id": "c3" * 16, "span_id": "d4" * 8}, "start_time": "yesterday"},
        "not a span",
    ]

    def route(method, path, query, body) -> Answer:
        return json_answer({"data": [good, *broken], "next_cursor": None})

    with FakePhoenix(route) as fake:
        assert _pull(fake.url, tmp_path) == 0
    cases = (tmp_path / "cases.jsonl").read_text().splitlines()
    assert [json.loads(c)["id"] for c in cases] == ["a1" * 8]
    err = capsys.readouterr().err
    assert "4 traces or spans skipped, unreadable" in err


def _records(tmp_path, n: int) -> str:
    path = tmp_path / "graded.jsonl"
    from judge.schemas import GradedRecord, JudgeInfo

    lines = []
    for k in range(n):
        record = GradedRecord(
            id=f"{k:016x}",
            rubric="faithfulness",
            rubric_version=1,
            rubric_sha256="0" * 64,
            judge=JudgeInfo(model="rules", output_mode="rules"),
            status="ok",
            score=1.0,
            label="faithful",
        )
        lines.append(record.model_dump_json())
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _push(url: str, records: str) -> int:
    return main(["traces", "push", records, "--phoenix", url, "--project", "shop-bot"])


def test_a_redirect_is_not_written(tmp_path, capsys) -> None:
    def route(method, path, query, body) -> Answer:
        return Answer(307, b"", {"Location": "http://sso.example/login"})

    records = _records(tmp_path, 4)
    with FakePhoenix(route) as fake:
        assert _push(fake.url, records) == 1
    captured = capsys.readouterr()
    assert "written" not in captured.out
    (line,) = captured.err.strip().splitlines()
    assert "answered 307: a redirect to http://sso.example/login" in line


def test_an_html_200_is_one_line_not_a_traceback(tmp_path, capsys) -> None:
    def route(method, path, query, body) -> Answer:
        return Answer(200, b"<!doctype html><p>maintenance</p>", {"Content-Type": "text/html"})

    with FakePhoenix(route) as fake:
        assert _push(fake.url, _records(tmp_path, 2)) == 2
    captured = capsys.readouterr()
    assert "written" not in captured.out
    (line,) = captured.err.strip().splitlines()
    assert "not JSON" in line and "Traceback" not in captured.err


def test_only_what_phoenix_stored_is_counted(tmp_path, capsys) -> None:
    """Phoenix says it stored two of the three it was sent: two are reported."""

    def route(method, path, query, body) -> Answer:
        sent = json.loads(body)["data"]
        return json_answer({"data": [{"id": str(n)} for n in range(len(sent) - 1)]})

    with FakePhoenix(route) as fake:
        assert _push(fake.url, _records(tmp_path, 3)) == 0
    assert "traces: 2 span annotations written" in capsys.readouterr().out


def test_a_password_in_the_url_is_never_printed(tmp_path, capsys) -> None:
    def route(method, path, query, body) -> Answer:
        return Answer(503, b"down")

    with FakePhoenix(route) as fake:
        url = fake.url.replace("http://", "http://ops:Hunter2-pw@")
        assert _pull(url, tmp_path) == 1
        assert _push(url, _records(tmp_path, 1)) == 1
        argv = ["watch", "--phoenix", url, "--project", "p", "--rubric", "faithfulness"]
        assert main([*argv, "-o", str(tmp_path / "w"), "--once", "--settle-seconds", "0"]) == 0
    assert (
        main(
            [
                "traces",
                "pull",
                "--phoenix",
                "ftp://u:Hunter2-pw@h",
                "--project",
                "p",
                "-o",
                str(tmp_path / "c.jsonl"),
            ]
        )
        == 2
    )
    argv = ["watch", "--otlp", str(tmp_path / "none.jsonl"), "--rubric", "faithfulness"]
    argv += ["-o", str(tmp_path / "w2"), "--once", "--otel-endpoint", "grpc://u:Hunter2-pw@h"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Hunter2-pw" not in text
    assert "http://***@127.0.0.1" in text


def test_a_watch_survives_what_phoenix_answers(tmp_path, capsys) -> None:
    """HTML, a span without its context, then a good page: the watch says each and goes
    on; nothing ends it."""
    answers = iter(
        [
            Answer(200, b"<html>login</html>", {"Content-Type": "text/html"}),
            json_answer({"data": [{"name": "no context"}], "next_cursor": None}),
        ]
    )

    def route(method, path, query, body) -> Answer:
        return next(answers, json_answer({"data": [], "next_cursor": None}))

    with FakePhoenix(route) as fake:
        argv = ["watch", "--phoenix", fake.url, "--project", "p", "--rubric", "faithfulness"]
        argv += ["-o", str(tmp_path / "w"), "--max-polls", "3", "--poll-seconds", "0"]
        argv += ["--settle-seconds", "0", "--since", "2026-01-01"]
        assert main(argv) == 0
    captured = capsys.readouterr()
    assert "poll_failed 1" in captured.out and "skipped 1" in captured.out
    assert "Traceback" not in captured.err
