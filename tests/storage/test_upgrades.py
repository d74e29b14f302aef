"""Upgrades: a store at every released schema version migrates forward to the schema a new store
gets, and a store a newer Plinth migrated is refused, untouched (``storage/migrate.py``).

The versions are the migrations the package ships, enumerated: each new migration adds a case."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from plinth.cli.errors import ExitCode
from plinth.storage import open_storage
from plinth.storage.base import Key, Put, Record
from plinth.storage.migrate import MIGRATIONS, StoreTooNew, known_migrations, migrate
from plinth.storage.postgres import yoyo_url
from tests.aio import RunAsync
from tests.storage.records import assert_same
from tests.support import pg
from tests.support.server import TEST_SECRETS_KEY, start_server

FUTURE = "9999_written_by_a_newer_plinth"


def _versions(backend: str) -> list[tuple[str, int]]:
    return [(backend, n) for n in range(1, len(known_migrations(MIGRATIONS / backend)) + 1)]


CASES = [
    *_versions("sqlite"),
    *(pytest.param(*case, marks=pytest.mark.postgres) for case in _versions("postgres")),
]


def _url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "postgres":
        return str(request.getfixturevalue("fresh_pg_url"))
    return f"sqlite:///{tmp_path / 'plinth.db'}"


def _yoyo(url: str) -> str:
    return yoyo_url(url) if url.startswith("postgresql") else url


def _schema(url: str) -> list[tuple[Any, ...]]:
    """Every column and index of the store, in an order that does not depend on history."""
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            columns = [(table, *col[1:]) for table in tables for col in conn.execute(f"PRAGMA table_info('{table}')")]
            indexes = list(conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'"))
    else:
        with psycopg.connect(url) as conn:
            columns = list(
                conn.execute(
                    "SELECT table_name, column_name, data_type, is_nullable, column_default "
                    "FROM information_schema.columns WHERE table_schema = 'public'"
                )
            )
            indexes = list(conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"))
    # yoyo's bookkeeping is not the schema (its log table holds timestamps of this history).
    return sorted((row for row in [*columns, *indexes] if not str(row[0]).startswith(("_yoyo", "yoyo"))), key=repr)


@pytest.mark.parametrize(("backend", "version"), CASES, ids=lambda v: str(v))
def test_a_store_at_each_released_version_migrates_to_the_current_schema(
    backend: str, version: int, tmp_path: Path, request: pytest.FixtureRequest, run_async: RunAsync
) -> None:
    released = tmp_path / "released"
    released.mkdir()
    for path in sorted((MIGRATIONS / backend).glob("*.sql"))[:version]:
        shutil.copy(path, released / path.name)
    url = _url(backend, tmp_path, request)
    migrate(_yoyo(url), released)  # the store as that release left it
    store = run_async(open_storage(url, tmp_path))  # this release opens it: the rest applies
    try:
        record = Record(Key("acme", "gvc", "", "after-upgrade"), "id-1", 1, b'{"name":"after-upgrade"}')
        run_async(store.commit([Put(record, None)]))
        assert_same(run_async(store.get(record.key, fresh=True)), record)
    finally:
        run_async(store.close())
    fresh_url = pg.create_database() if backend == "postgres" else f"sqlite:///{tmp_path / 'fresh.db'}"
    try:
        migrate(_yoyo(fresh_url), MIGRATIONS / backend)  # a store this release creates
        assert _schema(fresh_url) and _schema(url) == _schema(fresh_url)
    finally:
        if backend == "postgres":
            pg.drop_database(fresh_url)


def _from_the_future(url: str) -> None:
    """Record a migration this package does not ship, as a newer Plinth would have."""
    statement = "INSERT INTO _yoyo_migration (migration_hash, migration_id, applied_at_utc) VALUES ('f', %s, now())"
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute(statement.replace("%s", "?").replace("now()", "datetime('now')"), (FUTURE,))
    else:
        with psycopg.connect(url) as conn:
            conn.execute(statement, (FUTURE,))


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_store_migrated_by_a_newer_plinth_is_refused_untouched(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, run_async: RunAsync
) -> None:
    url = _url(backend, tmp_path, request)
    run_async(run_async_close(open_storage(url, tmp_path)))
    _from_the_future(url)
    before = _schema(url)
    with pytest.raises(StoreTooNew) as refused:
        run_async(open_storage(url, tmp_path))
    assert refused.value.unknown == [FUTURE]
    assert FUTURE in str(refused.value) and "newer Plinth" in str(refused.value)
    assert _schema(url) == before

    args = [sys.executable, "-m", "plinth", "serve", "--port", "0", "--data-dir", str(tmp_path / "data")]
    args += ["--database-url", url]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    env["PLINTH_SECRETS_KEY"] = TEST_SECRETS_KEY
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == ExitCode.STORE_TOO_NEW == 5
    assert done.stdout == ""  # not announced, no admin key
    [line] = done.stderr.splitlines()
    assert line.startswith("plinth: the store was upgraded by a newer Plinth") and FUTURE in line
    assert _schema(url) == before


async def run_async_close(opening: Any) -> None:
    store = await opening
    await store.close()


def test_a_server_restarted_on_its_own_store_applies_nothing_and_serves(tmp_path: Path) -> None:
    """The common upgrade: same schema, a restart. Nothing is refused, the data is there."""
    server = start_server(tmp_path / "data")
    try:
        with server.client() as api:
            assert api.post("/org/acme/gvc", json={"name": "kept"}).status_code == 201
    finally:
        server.stop()
    again = start_server(tmp_path / "data")
    try:
        with again.client(server.key) as api:
            assert api.get("/org/acme/gvc/kept").status_code == 200
    finally:
        again.stop()
