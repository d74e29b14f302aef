"""Fixtures every test package may use: an event loop runner and throwaway PostgreSQL databases."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.aio import RunAsync, event_loop_runner
from tests.support import pg


@pytest.fixture
def run_async() -> Iterator[RunAsync]:
    """``run_async(coro)`` runs ``coro`` on this test's event loop (closed after the test)."""
    with event_loop_runner() as run:
        yield run


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL server the tests may use (``PLINTH_TEST_PG_URL``); see ``tests/support/pg.py``."""
    return pg.require_postgres()


@pytest.fixture
def fresh_pg_url(pg_url: str) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    url = pg.create_database(pg_url)
    try:
        yield url
    finally:
        pg.drop_database(url)
