"""The llama.cpp tests' shared fixtures: one cache for the session, so a request one test
made is not made again by the next (a CPU model is slow), and the relevance run that the
cache, calibration and resume tests read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.llamacpp.support import grade_args, judge, short_cases, write_jsonl


@pytest.fixture(scope="session")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llamacpp-cache")


@pytest.fixture(scope="session")
def relevance_run(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> dict[str, object]:
    """Three relevance cases graded once: their input, records and what the CLI said."""
    folder = tmp_path_factory.mktemp("relevance")
    source = write_jsonl(folder / "cases.jsonl", short_cases(3))
    out = folder / "records.jsonl"
    done = judge("grade", str(source), "--rubric", "relevance", "-o", str(out),
                 *grade_args(cache, max_tokens=128))  # fmt: skip
    return {"source": source, "out": out, "done": done, "folder": folder}
