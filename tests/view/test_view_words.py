"""The word index (judge.view.words) answers a search exactly as reading the texts does:
a case-insensitive substring of a record's id, claims, rationale and error, or of its
case's question and answer. Expectations are computed here from the files, the way the
texts were read before the index: case, punctuation inside and around the needle,
non-ASCII letters, a word in two fields, a needle across two fields, frequent words (the
masks) and rare ones (the postings), and a needle of separators only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.view import create_view_app, open_viewer, words
from tests.view.support import TOKEN, write_jsonl

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SPECIAL = [
    # (id, question, answer, claims, rationale, error)
    (
        "w-case",
        "How do I get a Refund?",
        "Refunds take 5 days.",
        ["REFUND within 5 days."],
        "ok",
        None,
    ),
    (
        "w-punct",
        "re-fund, policy?",
        "The refund.policy says: no.",
        ["e-mail us (today)."],
        None,
        None,
    ),
    ("w-both", "Is the warranty long?", "No.", ["The warranty is short."], "warranty: short", None),
    ("w-across", "policy first", "answer", ["ends with refund"], None, None),
    ("w-uni", "Wie groß ist die Größe?", "ÜBER 東京タワー café", ["naïve façade"], None, None),
    ("w-emoji", "ok👍 great", "👍", ["thumbs👍up"], None, "reply is not JSON"),
    ("W-Upper-ID", "nothing here", "nothing", [], None, None),
]
NEEDLES = [
    "refund",
    "REFUND",
    "Refund?",
    "refund.",
    "refund.policy",
    "re-fund",
    "fund, pol",
    "e-mail",
    "(today)",
    "warranty",
    "warranty: short",
    "refund policy",
    "refund pol",
    "größe",
    "GRÖSSE",
    "über",
    "京タ",
    "東京タワー café",
    "café",
    "cafe",
    "naïve",
    "ïve fa",
    "👍",
    "ok👍",
    "👍up",
    "w-upper",
    "upper-id",
    "w-",
    "-",
    "?",
    " ",
    ". ",
    "dense",
    "dense7",
    "rare",
    "rare01",
    "rare1",
    "are0",
    "reply is not",
    "zzz-nowhere",
]


def special_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records, cases = [], []
    for case_id, question, answer, claims, rationale, error in SPECIAL:
        cases.append({"id": case_id, "question": question, "answer": answer})
        records.append(record(case_id, claims, rationale, error))
    # 300 more: a frequent word in each (a mask bit) and a word of its own (past the 256
    # frequent ones: in the postings)
    for i in range(300):
        case_id = f"bulk-{i:03d}"
        cases.append({"id": case_id, "question": f"dense{i % 10} question", "answer": "fine"})
        records.append(record(case_id, [f"a claim with rare{i:03d}x in it"], None, None))
    return records, cases


def record(
    case_id: str, claims: list[str], rationale: str | None, error: str | None
) -> dict[str, Any]:
    verdict = {"claims": [{"claim": c, "verdict": "supported", "evidence": ""} for c in claims]}
    if rationale is not None:
        verdict["rationale"] = rationale  # type: ignore[assignment]
    return {
        "id": case_id, "rubric": "faithfulness", "rubric_version": 1, "rubric_sha256": "0" * 64,
        "status": "parse_error" if error else "ok", "verdict": None if error else verdict,
        "score": None if error else 1.0, "label": None if error else "faithful",
        "error": error, "slices": [],
    }  # fmt: skip


def texts(row: dict[str, Any], case: dict[str, Any]) -> tuple[str, str]:
    """The two texts a search reads, as the index builds them (concat_ws over non-nulls)."""
    verdict = row["verdict"] or {}
    claims = " ".join(c["claim"] for c in verdict.get("claims", []))
    parts = [row["id"], claims, verdict.get("rationale"), row["error"]]
    record_text = " ".join(p for p in parts if p is not None)
    return record_text.lower(), f"{case['question']} {case['answer']}".lower()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, list[str]]]:
    folder = tmp_path_factory.mktemp("words")
    rows, cases = special_rows()
    write_jsonl(folder / "faithfulness.jsonl", rows)
    write_jsonl(folder / "cases.jsonl", cases)
    viewer = open_viewer([folder], index_dir=tmp_path_factory.mktemp("index"))
    by_id = {c["id"]: c for c in cases}
    haystacks = [texts(r, by_id[r["id"]]) for r in rows]
    with TestClient(create_view_app(viewer, token=TOKEN), base_url="http://127.0.0.1") as client:
        run = client.get("/api/runs", headers=AUTH).json()[0]["id"]
        client.haystacks = haystacks  # type: ignore[attr-defined]
        client.viewer = viewer  # type: ignore[attr-defined]
        yield client, run, [r["id"] for r in rows]
    viewer.engine.close()


def searched(client: TestClient, run: str, needle: str) -> list[str]:
    found: list[str] = []
    while True:
        params = {"q": needle, "offset": len(found), "limit": 500}
        response = client.get(f"/api/runs/{run}/records", params=params, headers=AUTH)
        assert response.status_code == 200, response.text
        page = [r["id"] for r in response.json()["records"]]
        if not page:
            return found
        found += page


def expected(client: TestClient, ids: list[str], needle: str) -> list[str]:
    lowered = needle.lower()
    pairs = zip(ids, client.haystacks, strict=True)  # type: ignore[attr-defined]
    return [i for i, (text, case) in pairs if lowered in text or lowered in case]


@pytest.mark.parametrize("needle", NEEDLES)
def test_a_search_through_the_word_index_equals_reading_the_texts(
    served: tuple[TestClient, str, list[str]], needle: str
) -> None:
    client, run, ids = served
    assert searched(client, run, needle) == expected(client, ids, needle)


def test_the_edge_cases_find_what_they_should(served: tuple[TestClient, str, list[str]]) -> None:
    """The expectations above are computed; these pin a few by hand, so the model cannot
    be wrong the same way the index is."""
    client, run, _ = served
    assert searched(client, run, "REFUND") == ["w-case", "w-punct", "w-across"]
    assert searched(client, run, "refund.policy") == ["w-punct"]
    assert searched(client, run, "refund policy") == []  # across two fields: no
    assert searched(client, run, "warranty") == ["w-both"]  # in two fields: once
    assert searched(client, run, "GRÖSSE") == []  # lower-cased, not folded: ß stays
    assert searched(client, run, "größe") == ["w-uni"]
    assert searched(client, run, "京タ") == ["w-uni"]  # inside a word with no spaces
    assert searched(client, run, "👍") == ["w-emoji"]  # separators only: the texts read
    assert searched(client, run, "rare01") == [f"bulk-{i:03d}" for i in range(10, 20)]


def test_too_many_candidates_fall_back_to_reading_the_texts(
    served: tuple[TestClient, str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, run, ids = served
    monkeypatch.setattr(words, "MAX_CANDIDATES", 3)
    for needle in ("a claim", "claim with rare0", "w-"):
        assert searched(client, run, needle) == expected(client, ids, needle)


def test_both_kinds_of_word_are_searched(served: tuple[TestClient, str, list[str]]) -> None:
    """The run has more distinct words than the masks have bits: the searches above go
    through the masks (frequent words) and the postings (the rest), and the id sort key."""
    client, run, _ = served
    viewer = client.viewer  # type: ignore[attr-defined]
    _, index = viewer.index(viewer.run(run))
    alias = viewer.engine.alias(index)
    cursor = viewer.engine.cursor()
    try:
        dense, rare = cursor.execute(
            f"SELECT count(bit), count(*) - count(bit) FROM {alias}.vocab"
        ).fetchone()
        postings = cursor.execute(f"SELECT count(*) FROM {alias}.rare").fetchone()
    finally:
        cursor.close()
    assert dense == words.DENSE and rare > 0 and postings is not None and postings[0] > 0
    assert searched(client, run, "dense7") == [f"bulk-{i:03d}" for i in range(7, 300, 10)]
