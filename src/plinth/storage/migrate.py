"""Versioned schema migrations (yoyo), shared by both backends and applied at start.

Every process runs ``migrate`` at start (``plinth serve`` and each of its workers, and every
replica), so it must be safe when processes race and when one dies half-way. yoyo's own lock
is a row in a table: a process killed while holding it leaves the row behind and every later
start fails ("run yoyo break-lock") until an operator removes it. Plinth takes a lock the
operating system or the database releases when its holder dies instead: a PostgreSQL session
advisory lock, or ``flock`` on a file beside the SQLite database.

Migrations are forward-only, and a store only ever moves forward: before applying anything,
``migrate`` reads the ids of the migrations applied to the store (yoyo's own table) and refuses,
with :class:`StoreTooNew`, a store holding one this package does not ship. That store was
migrated by a newer Plinth, whose data this one may not understand; it is left untouched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from yoyo.exceptions import LockTimeout

MIGRATIONS = Path(__file__).parent / "migrations"
#: Seconds to wait for another process's migration before giving up (the start is retried).
LOCK_TIMEOUT_S = 10.0
_POLL_S = 0.1
#: The advisory lock key, a constant all Plinth processes on one database agree on.
_PG_LOCK_KEY = 0x706C696E7468  # "plinth"


class StoreTooNew(Exception):
    """The store holds migrations this Plinth does not ship (``unknown``, their ids)."""

    def __init__(self, unknown: list[str]):
        self.unknown = unknown
        super().__init__(
            f"the store was upgraded by a newer Plinth: it has schema migrations this version does not know "
            f"({', '.join(unknown)}); run that newer version (or later), or restore a backup made before the "
            f"upgrade. Nothing was written to the store"
        )


def known_migrations(directory: Path) -> list[str]:
    """The ids of the migrations in ``directory``, in the order they apply."""
    from yoyo import read_migrations

    return [m.id for m in read_migrations(str(directory))]


def migrate(url: str, directory: Path) -> None:
    """Apply pending migrations from ``directory`` to the database at the yoyo ``url``.

    Blocking: call it from a worker thread. Raises ``LockTimeout`` if another process holds
    the migration lock for longer than ``LOCK_TIMEOUT_S``, and :class:`StoreTooNew` (having
    applied nothing) when the store has migrations ``directory`` does not hold.
    """
    from yoyo import get_backend, read_migrations

    backend = get_backend(url)
    try:
        migrations = read_migrations(str(directory))
        with _crash_safe_lock(backend, url):
            unknown = sorted(set(applied_migrations(backend)) - {m.id for m in migrations})
            if unknown:
                raise StoreTooNew(unknown)
            backend.apply_migrations(backend.to_apply(migrations))
    finally:
        backend.connection.close()


def applied_migrations(backend: Any) -> list[str]:
    """The ids of the migrations applied to ``backend``'s database (yoyo's table), oldest first."""
    backend.ensure_internal_schema_updated()
    table = backend.migration_table_quoted
    return [str(row[0]) for row in backend.execute(f"SELECT migration_id FROM {table} ORDER BY applied_at_utc")]


@contextlib.contextmanager
def _crash_safe_lock(backend: Any, url: str) -> Iterator[None]:
    lock = _sqlite_file_lock(url) if url.startswith("sqlite:") else _postgres_advisory_lock(backend)
    with lock:
        # yoyo takes its own (row) lock around internal upgrades and migrations; ours excludes
        # every other migrating process already, and dies with this one.
        backend.lock = _no_lock
        yield


@contextlib.contextmanager
def _no_lock(timeout: float = 0) -> Iterator[None]:
    yield


@contextlib.contextmanager
def _postgres_advisory_lock(backend: Any) -> Iterator[None]:
    conn = backend.connection
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        cursor = conn.cursor()
        cursor.execute("SELECT pg_try_advisory_lock(%s)", (_PG_LOCK_KEY,))
        acquired = bool(cursor.fetchone()[0])
        conn.commit()  # a session lock outlives the transaction; do not hold one open
        if acquired:
            break
        if time.monotonic() > deadline:
            raise LockTimeout("another process has been migrating this database for too long")
        time.sleep(_POLL_S)
    try:
        yield
    finally:
        cursor = conn.cursor()
        cursor.execute("SELECT pg_advisory_unlock(%s)", (_PG_LOCK_KEY,))
        conn.commit()


@contextlib.contextmanager
def _sqlite_file_lock(url: str) -> Iterator[None]:
    path = Path(url.removeprefix("sqlite:///") + ".migrate-lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout("another process has been migrating this database for too long") from None
                time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)  # releases the lock
