"""Scratch stores: a fresh SQLite data directory, or a fresh ``plinth_bench_*`` PostgreSQL database.

Each backend is measured on a store made for the run and removed after it (also on error).
"""

from __future__ import annotations

import importlib.util
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

BACKENDS = ("sqlite", "postgresql")
LABELS = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
DEFAULT_PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True)
class Store:
    backend: str
    data_dir: Path
    database_url: str | None

    @property
    def label(self) -> str:
        return LABELS[self.backend]

    @property
    def database_name(self) -> str | None:
        return urlsplit(self.database_url).path.lstrip("/") if self.database_url else None


def unavailable_reason(backend: str, pg_admin_url: str) -> str | None:
    """Why ``backend`` cannot be measured here, or ``None`` when it can."""
    if backend != "postgresql":
        return None
    if importlib.util.find_spec("plinth.storage.postgres") is None:
        return "this tree has no PostgreSQL backend yet (plinth.storage.postgres)"
    if urlsplit(pg_admin_url).hostname not in ("127.0.0.1", "localhost", "::1"):
        return f"the PostgreSQL URL must name a loopback host (got {urlsplit(pg_admin_url).hostname})"
    try:
        import psycopg

        with psycopg.connect(pg_admin_url, connect_timeout=3):
            return None
    except Exception as exc:
        return f"PostgreSQL is not reachable at {pg_admin_url}: {exc}"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@contextmanager
def scratch_store(backend: str, workdir: Path, pg_admin_url: str) -> Iterator[Store]:
    data_dir = workdir / f"data-{backend}"
    data_dir.mkdir(parents=True)
    if backend != "postgresql":
        yield Store(backend, data_dir, None)
        return
    import psycopg

    name = f"plinth_bench_{secrets.token_hex(4)}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield Store(backend, data_dir, _with_database(pg_admin_url, name))
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
