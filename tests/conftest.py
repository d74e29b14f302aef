"""Fixtures every test package may use: an event loop runner and throwaway PostgreSQL databases."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from tests.aio import RunAsync, event_loop_runner

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
TEST_DATABASE_PREFIX = "plinth_test_"


@pytest.fixture
def run_async() -> Iterator[RunAsync]:
    """``run_async(coro)`` runs ``coro`` on this test's event loop (closed after the test)."""
    with event_loop_runner() as run:
        yield run


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL server the tests may use (``PLINTH_TEST_PG_URL``).

    Unreachable: the test is skipped with the reason, except under ``CI=true``, where a
    missing database is a broken build rather than a choice.
    """
    url = os.environ.get("PLINTH_TEST_PG_URL", DEFAULT_PG_URL)
    try:
        with psycopg.connect(url, connect_timeout=3):
            pass
    except psycopg.Error as exc:
        reason = f"PostgreSQL unreachable at {_without_password(url)}: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return url


@pytest.fixture
def fresh_pg_url(pg_url: str) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test (safe under pytest-xdist)."""
    name = f"{TEST_DATABASE_PREFIX}{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        _create_database(conn, name)
    try:
        yield _with_database(pg_url, name)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _create_database(conn: psycopg.Connection, name: str) -> None:
    # A locale-aware collation on purpose: the code must not depend on the server's being
    # "C" (as it often is in containers) for names and strings to order by code point.
    ident = sql.Identifier(name)
    try:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'").format(ident)
        )
    except psycopg.Error:
        # PostgreSQL before 15, or built without ICU.
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
