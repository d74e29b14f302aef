"""The embedded backend: one SQLite file in WAL mode, every commit durable (``synchronous=FULL``).

Reads run inline on the event loop (a primary-key read takes microseconds, and WAL lets them
proceed while a write is in progress); writes run on one dedicated thread with their own
connection, so an fsync or a lock held by another worker process never stalls the loop.
Several worker processes may share the file: writers queue on SQLite's lock (``busy_timeout``).
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from plinth.storage import statements as st
from plinth.storage.base import (
    AppendEvent,
    Delete,
    EventRecord,
    Key,
    Operation,
    Put,
    Record,
    SetMeta,
    StorageError,
)
from plinth.storage.query import ListRequest, Scalar
from plinth.storage.sqlbuild import compile_list

MIGRATIONS = Path(__file__).parent / "migrations" / "sqlite"
BUSY_TIMEOUT_MS = 10_000


class SqliteDialect:
    placeholder = "?"

    def path_param(self, path: tuple[str, ...]) -> str:
        return "$" + "".join('."' + part.replace('"', '\\"') + '"' for part in path)

    def value(self) -> str:
        return "json_extract(doc, {p})"

    def type_of(self) -> str:
        return "json_type(doc, {p})"

    def text(self) -> str:
        return (
            "(CASE json_type(doc, {p}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
            "ELSE CAST(json_extract(doc, {p}) AS TEXT) END)"
        )

    def literal(self, value: Scalar) -> tuple[str, Any]:
        return "{v}", value

    def regex(self, subject: str) -> str:
        return f"regexp({{v}}, {subject})"

    def bool_types(self) -> tuple[str, ...]:
        return ("true", "false")

    def string_type(self) -> str:
        return "text"


DIALECT = SqliteDialect()


def _unavailable(exc: sqlite3.Error) -> bool:
    """Only a busy, locked or unreadable database is "unavailable"; anything else is a bug (500)."""
    return isinstance(exc, sqlite3.OperationalError) and any(
        word in str(exc) for word in ("locked", "busy", "unable to open", "disk", "readonly")
    )


def _regexp(pattern: str, value: Any) -> bool:
    if value is None:
        return False
    try:
        return re.search(pattern, str(value)) is not None
    except re.error:
        return False


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # LIKE is case-sensitive in PostgreSQL; make SQLite agree.
    conn.execute("PRAGMA case_sensitive_like=ON")
    conn.create_function("regexp", 2, _regexp, deterministic=True)
    return conn


def migrate(url: str, directory: Path) -> None:
    """Apply pending versioned migrations (yoyo), under yoyo's lock so replicas may race."""
    from yoyo import get_backend, read_migrations

    backend = get_backend(url)
    migrations = read_migrations(str(directory))
    with backend.lock():
        backend.apply_migrations(backend.to_apply(migrations))
    backend.connection.close()


class SqliteStorage:
    """SQLite implementation of :class:`plinth.storage.base.Storage`."""

    def __init__(self, path: Path):
        self.path = path
        self._reader = _connect(path)
        self._writer = _connect(path)
        self._write_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plinth-sqlite-writer")
        self._get_sql = st.render(st.SELECT_RESOURCE, "?")

    @classmethod
    async def open(cls, path: Path) -> SqliteStorage:
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(migrate, f"sqlite:///{path}", MIGRATIONS)
        return cls(path)

    async def get(self, key: Key) -> Record | None:
        try:
            row = self._reader.execute(self._get_sql, (key.org, key.kind, key.parent, key.name)).fetchone()
        except sqlite3.OperationalError as exc:
            if not _unavailable(exc):
                raise
            raise StorageError("unavailable", key, str(exc)) from exc
        if row is None:
            return None
        return Record(key, row[0], row[1], row[2].encode())

    async def list_page(self, request: ListRequest) -> list[Record]:
        sql = compile_list(request, DIALECT, "org, kind, parent, name, id, version, doc")
        return self._records(sql.text, sql.params)

    async def referrers(self, org: str, href: str, kinds: Sequence[str]) -> list[Record]:
        if not kinds:
            return []
        return self._records(st.render(st.referrers_sql(len(kinds)), "?"), [org, href, *kinds])

    def _records(self, sql: str, params: Sequence[Any]) -> list[Record]:
        try:
            rows = self._reader.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if not _unavailable(exc):
                raise
            raise StorageError("unavailable", None, str(exc)) from exc
        return [Record(Key(r[0], r[1], r[2], r[3]), r[4], r[5], r[6].encode()) for r in rows]

    async def commit(self, ops: Sequence[Operation]) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._write_thread, self._commit_sync, ops)

    def _commit_sync(self, ops: Sequence[Operation]) -> None:
        conn = self._writer
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StorageError("unavailable", None, str(exc)) from exc
        try:
            for op in ops:
                _apply(conn, op)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    async def events(self, key: Key, after_seq: int, limit: int) -> list[EventRecord]:
        rows = self._reader.execute(
            st.render(st.SELECT_EVENTS, "?"), (key.org, key.kind, key.parent, key.name, after_seq, limit)
        ).fetchall()
        return [EventRecord(r[0], r[1].encode()) for r in rows]

    async def get_meta(self, name: str) -> str | None:
        row = self._reader.execute(st.render(st.SELECT_META, "?"), (name,)).fetchone()
        return None if row is None else str(row[0])

    async def ping(self) -> None:
        try:
            self._reader.execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise StorageError("unavailable", None, str(exc)) from exc

    async def close(self) -> None:
        self._write_thread.shutdown(wait=True)
        self._reader.close()
        self._writer.close()


def _key_params(key: Key) -> tuple[str, str, str, str]:
    return (key.org, key.kind, key.parent, key.name)


def _missing_or_conflict(conn: sqlite3.Connection, key: Key) -> StorageError:
    row = conn.execute(st.render(st.EXISTS_RESOURCE, "?"), _key_params(key)).fetchone()
    return StorageError("not_found" if row is None else "conflict", key)


def _apply(conn: sqlite3.Connection, op: Operation) -> None:
    if isinstance(op, Put):
        rec = op.record
        doc = rec.doc.decode()
        if op.expected_version is None:
            try:
                conn.execute(st.render(st.INSERT_RESOURCE, "?"), (*_key_params(rec.key), rec.id, rec.version, doc))
            except sqlite3.IntegrityError as exc:
                raise StorageError("exists", rec.key) from exc
        else:
            cur = conn.execute(
                st.render(st.UPDATE_RESOURCE, "?"),
                (rec.id, rec.version, doc, *_key_params(rec.key), op.expected_version),
            )
            if cur.rowcount != 1:
                raise _missing_or_conflict(conn, rec.key)
        conn.execute(st.render(st.DELETE_REFS, "?"), _key_params(rec.key))
        for target in sorted(set(op.refs)):
            conn.execute(st.render(st.INSERT_REF, "?"), (*_key_params(rec.key), target))
    elif isinstance(op, Delete):
        cur = conn.execute(st.render(st.DELETE_RESOURCE, "?"), (*_key_params(op.key), op.expected_version))
        if cur.rowcount != 1:
            raise _missing_or_conflict(conn, op.key)
        conn.execute(st.render(st.DELETE_REFS, "?"), _key_params(op.key))
    elif isinstance(op, AppendEvent):
        conn.execute(st.render(st.INSERT_EVENT, "?"), (*_key_params(op.key), op.id, op.created, op.doc.decode()))
    elif isinstance(op, SetMeta):
        verb = "INSERT OR IGNORE" if op.only_if_absent else "INSERT OR REPLACE"
        conn.execute(f"{verb} INTO meta (name, value) VALUES (?, ?)", (op.name, op.value))


__all__ = ["SqliteStorage", "migrate"]
