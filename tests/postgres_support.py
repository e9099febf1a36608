"""Helpers for the PostgreSQL tests (`-m postgres`, run by .ci/postgres): a fresh database
per test on the server $JUDGE_TEST_POSTGRES_URL names, dropped afterwards.

No tests here. Without the variable a test that asks for `postgres_url` FAILS (it is not
skipped): a run of `-m postgres` that tested nothing must not look green.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

URL_ENV = "JUDGE_TEST_POSTGRES_URL"


def _with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a new, empty database (dropped after the test)."""
    server = os.environ.get(URL_ENV)
    if not server:
        pytest.fail(f"{URL_ENV} is not set: run the PostgreSQL tests with .ci/postgres")
    import psycopg

    name = f"judge_test_{secrets.token_hex(6)}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(server, name)
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
