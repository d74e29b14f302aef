"""Throwaway PostgreSQL databases for tests: skipped with a visible reason when the server is
unreachable, except under CI=true, where an unreachable PostgreSQL fails the run."""

from __future__ import annotations

import os
import secrets
from urllib.parse import urlsplit, urlunsplit

import pytest

BASE_URL = os.environ.get("PLINTH_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _admin_connect():  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(BASE_URL, autocommit=True, connect_timeout=3)


def require_postgres() -> None:
    try:
        _admin_connect().close()
    except Exception as exc:
        message = f"PostgreSQL unreachable at {BASE_URL}: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def create_database(prefix: str = "plinth_test_") -> str:
    require_postgres()
    name = prefix + secrets.token_hex(6)
    with _admin_connect() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(BASE_URL)
    return urlunsplit(parts._replace(path=f"/{name}"))


def drop_database(url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    with _admin_connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
