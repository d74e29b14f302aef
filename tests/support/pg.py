"""Throwaway PostgreSQL databases for tests.

Where the server is unreachable the tests that need it are skipped with the reason shown,
except under ``CI=true``, where a missing database is a broken build rather than a choice.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from tests.support.required import unavailable

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
TEST_DATABASE_PREFIX = "plinth_test_"


def base_url() -> str:
    return os.environ.get("PLINTH_TEST_PG_URL", DEFAULT_PG_URL)


def require_postgres() -> str:
    """The server URL, or skip (fail under CI=true) with the reason it is unreachable."""
    url = base_url()
    try:
        with psycopg.connect(url, connect_timeout=3):
            pass
    except psycopg.Error as exc:
        unavailable("PostgreSQL", f"PostgreSQL unreachable at {without_password(url)}: {exc}")
    return url


def create_database(server_url: str | None = None) -> str:
    """A new, empty database (safe under pytest-xdist); returns its URL."""
    server_url = server_url or require_postgres()
    name = f"{TEST_DATABASE_PREFIX}{uuid.uuid4().hex[:16]}"
    ident = sql.Identifier(name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        try:
            # A locale-aware collation on purpose: the code must not depend on the server's being
            # "C" (as it often is in containers) for names and strings to order by code point.
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'").format(ident)
            )
        except psycopg.Error:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))  # PostgreSQL < 15 or without ICU
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def drop_database(url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    parts = urlsplit(url)
    server = urlunsplit((parts.scheme, parts.netloc, urlsplit(base_url()).path, parts.query, parts.fragment))
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 5432


def with_address(url: str, host: str, port: int) -> str:
    """``url`` pointed at another host and port (a proxy in front of the same server)."""
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}:{port}" if userinfo else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
