"""The embedded backend: one SQLite file in WAL mode, every commit durable (``synchronous=FULL``).

Reads run inline on the event loop (a primary-key read takes microseconds, and WAL lets them
proceed while a write is in progress); writes run on one dedicated thread with their own
connection, so an fsync or a lock held by another worker process never stalls the loop.
Several worker processes may share the file: writers queue on SQLite's lock (``busy_timeout``).
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from plinth.files import private_dir, private_sqlite
from plinth.metrics import SQLITE_COMMITS, StoreMeter
from plinth.storage import regex
from plinth.storage import statements as st
from plinth.storage.base import (
    Change,
    ChangeBounds,
    DumpCounts,
    EventRecord,
    Key,
    MetaEntry,
    NotifyCallback,
    Operation,
    Record,
    Row,
    StorageError,
)
from plinth.storage.group_commit import GroupCommit
from plinth.storage.migrate import MIGRATIONS, migrate
from plinth.storage.query import ListRequest, Scalar, scalar_text, snapshot_pages
from plinth.storage.sqlbuild import Fragment, compile_list, sql
from plinth.storage.sqlite_cache import ChangeCounter, SqliteRecordCache
from plinth.storage.sqlite_remote import CommitterAddress, RemoteCommit
from plinth.storage.sqlite_writer import SQL, SqliteWriter, key_params
from plinth.storage.sqlite_writer import connect as _connect

_OWN_COMMITS = SQLITE_COMMITS.labels("worker", "one")
_COLUMNS = "org, kind, parent, name, id, version, doc"
#: Rows :meth:`SqliteStorage.dump` fetches at a time.
DUMP_FETCH = 1000


class SqliteDialect:
    """``sqlbuild`` spelled with SQLite's JSON1 functions over the ``doc`` text column."""

    placeholder = "?"

    def _path(self, path: tuple[str, ...]) -> Fragment:
        # Keys are quoted so dots and slashes in tag names stay one key; sqlbuild has
        # already rejected keys containing '"', which SQLite paths cannot express.
        return Fragment("?", ("$" + "".join(f'."{part}"' for part in path),))

    def type_of(self, path: tuple[str, ...]) -> Fragment:
        p = self._path(path)
        return sql(
            "CASE json_type(doc, {}) WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' "
            "WHEN 'text' THEN 'string' ELSE json_type(doc, {}) END",
            p,
            p,
        )

    def number(self, path: tuple[str, ...]) -> Fragment:
        p = self._path(path)
        return sql("CASE WHEN json_type(doc, {}) IN ('integer', 'real') THEN json_extract(doc, {}) END", p, p)

    def string(self, path: tuple[str, ...]) -> Fragment:
        # TEXT compares with the BINARY collation: UTF-8 bytes, i.e. code point order.
        p = self._path(path)
        return sql("CASE WHEN json_type(doc, {}) = 'text' THEN json_extract(doc, {}) END", p, p)

    def text(self, path: tuple[str, ...]) -> Fragment:
        p = self._path(path)
        return sql(
            "CASE json_type(doc, {}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
            "WHEN 'text' THEN json_extract(doc, {}) WHEN 'integer' THEN CAST(json_extract(doc, {}) AS TEXT) "
            "WHEN 'real' THEN CAST(json_extract(doc, {}) AS TEXT) END",
            p,
            p,
            p,
            p,
        )

    def regex(self, subject: Fragment, pattern: Fragment) -> Fragment:
        return sql("regexp({}, {})", pattern, subject)

    def tag_hint(self, tag: str, values: tuple[Scalar, ...] | None) -> Fragment | None:
        return None


DIALECT = SqliteDialect()


def _check_patterns(request: ListRequest) -> None:
    for term in request.filter.terms:
        if term.op in ("~", "=~"):
            try:
                regex.compile_pattern(scalar_text(term.value))
            except regex.PatternError as exc:
                raise StorageError("invalid", None, str(exc)) from exc


def _unavailable(exc: sqlite3.Error) -> bool:
    """Only a busy, locked or unreadable database is "unavailable"; anything else is a bug."""
    return isinstance(exc, sqlite3.OperationalError) and any(
        word in str(exc) for word in ("locked", "busy", "unable to open", "disk", "readonly")
    )


class SqliteStorage:
    """SQLite implementation of :class:`plinth.storage.base.Storage`."""

    def __init__(self, path: Path, committer: CommitterAddress | None = None):
        """``committer``: the server's committer to hand writes to (``sqlite_committer.py``),
        when this is one of several ``plinth serve`` workers; else this process commits."""
        self.path = path
        self._reader = _connect(path)
        self._write_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plinth-sqlite-writer")
        self._changes = ChangeCounter(path)
        self._cache = SqliteRecordCache(self._changes)
        self._meter = StoreMeter("sqlite")
        self._writer = SqliteWriter(path, self._changes)
        self._group = GroupCommit(self._write_thread, self._commit_here)
        self._remote = RemoteCommit.connect(committer, path, self._changes, self._group) if committer else None

    def _commit_here(self, writes: Sequence[Sequence[Operation]]) -> Sequence[BaseException | None]:
        outcomes = self._writer.commit_group(writes)[0]
        _OWN_COMMITS.inc()  # one a group: under a microsecond beside its fsync
        return outcomes

    @classmethod
    async def open(cls, path: Path, committer: CommitterAddress | None = None) -> SqliteStorage:
        if not path.parent.exists():
            private_dir(path.parent, tighten_existing=False)
        # Created 0600 before SQLite first opens it: SQLite gives its -wal and -shm files the
        # database file's mode, so they are private too, whatever the umask.
        private_sqlite(path)
        await asyncio.to_thread(migrate, f"sqlite:///{path}", MIGRATIONS / "sqlite")
        return cls(path, committer)

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None:
        # The cache is exact (sqlite_cache.py), so a ``fresh`` read may use it too.
        cached = self._cache.get(key)
        if cached is not None:
            self._meter.hits.inc()
            return cached if isinstance(cached, Record) else None  # ABSENT: known not stored
        self._meter.misses.inc()
        rows = self._read(SQL["SELECT_RESOURCE"], key_params(key), "get")
        if not rows:
            self._cache.put_absent(key)
            return None
        record = Record(key, rows[0][0], rows[0][1], rows[0][2].encode())
        self._cache.put(record)
        return record

    async def list_page(self, request: ListRequest) -> list[Record]:
        _check_patterns(request)
        query = compile_list(request, DIALECT, _COLUMNS)
        return self._records(query.text, query.params, "list")

    async def referrers(self, org: str, href: str, kinds: Sequence[str]) -> list[Record]:
        if not kinds:
            return []
        statement = st.render(st.referrers_sql(len(kinds), st.SQLITE_REFS), "?")
        return self._records(statement, [org, href, *kinds], "referrers")

    def _records(self, statement: str, params: Sequence[Any], operation: str) -> list[Record]:
        return self._records_of(self._read(statement, params, operation))

    @staticmethod
    def _records_of(rows: list[Any]) -> list[Record]:
        return [Record(Key(r[0], r[1], r[2], r[3]), r[4], r[5], r[6].encode()) for r in rows]

    def _read(self, statement: str, params: Sequence[Any], operation: str) -> list[Any]:
        started = time.perf_counter()
        try:
            return self._reader.execute(statement, params).fetchall()
        except sqlite3.Error as exc:
            self._meter.failed(operation, "unavailable" if _unavailable(exc) else "error")
            if not _unavailable(exc):
                raise  # a bug in our SQL: let it become a logged 500, not a misleading 503
            raise StorageError("unavailable", None, str(exc)) from exc
        finally:
            self._meter.observe(operation, time.perf_counter() - started)

    async def commit(self, ops: Sequence[Operation]) -> None:
        # Shares one durable commit with the writes queued meanwhile (``group_commit.py``).
        started = time.perf_counter()
        try:
            await (self._remote or self._group).submit(ops)
        except StorageError as exc:
            self._meter.failed("commit", exc.code)
            raise
        finally:
            self._meter.observe("commit", time.perf_counter() - started)

    async def _write(self, operation: str, work: Callable[[Any], None], arg: Any) -> None:
        """``work(arg)`` on the writer thread, measured from the moment it is asked for (a wait
        for the thread or for another worker's commit is part of what a writer sees)."""
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        try:
            await loop.run_in_executor(self._write_thread, work, arg)
        except StorageError as exc:
            self._meter.failed(operation, exc.code)
            raise
        finally:
            self._meter.observe(operation, time.perf_counter() - started)

    def _write_transaction(self, work: Callable[[sqlite3.Connection], None]) -> None:
        """``work`` in one transaction of this process's own (an import, a trim of the change log)."""
        self._writer.transaction(work)

    async def events(self, key: Key, after_seq: int, limit: int) -> list[EventRecord]:
        rows = self._read(SQL["SELECT_EVENTS"], (*key_params(key), after_seq, limit), "events")
        return [EventRecord(r[0], r[1].encode()) for r in rows]

    async def meta_with_prefix(self, prefix: str) -> list[MetaEntry]:
        rows = self._read(SQL["SELECT_META_PREFIX"], (prefix, prefix), "meta")
        return [MetaEntry(str(r[0]), str(r[1])) for r in rows]

    async def get_meta(self, name: str) -> str | None:
        rows = self._read(SQL["SELECT_META"], (name,), "meta")
        return None if not rows else str(rows[0][0])

    async def changes(self, after_seq: int, limit: int) -> list[Change]:
        return [st.change_row(r, str.encode) for r in self._read(SQL["SELECT_CHANGES"], (after_seq, limit), "changes")]

    async def change_bounds(self) -> ChangeBounds:
        return _bounds(self._read(st.CHANGE_BOUNDS, (), "changes")[0])

    async def trim_changes(self, keep: int, max_age_s: float) -> ChangeBounds:
        def trim(conn: sqlite3.Connection) -> None:
            cutoff = conn.execute(SQL["TRIM_CUTOFF"], (keep, time.time() - max_age_s)).fetchone()[0]
            if cutoff is not None:
                conn.execute(SQL["TRIM_CHANGES"], (cutoff,))
                conn.execute(SQL["SET_META"], (st.CHANGES_HORIZON_META, str(cutoff)))

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._write_thread, self._write_transaction, trim)
        return await self.change_bounds()

    async def snapshot(self, request: ListRequest) -> tuple[int, list[Record]]:
        _check_patterns(request)
        # Synchronous on the reader connection, inside one read transaction: nothing else runs
        # on it meanwhile, and WAL keeps every page of it at one commit.
        conn = self._reader
        try:
            conn.execute("BEGIN")
            try:
                bounds = _bounds(conn.execute(st.CHANGE_BOUNDS).fetchone())
                records: list[Record] = []
                pages = snapshot_pages(request)
                page = next(pages)
                while True:
                    query = compile_list(page, DIALECT, _COLUMNS)
                    rows = self._records_of(conn.execute(query.text, query.params).fetchall())
                    records += rows
                    try:
                        page = pages.send(rows)
                    except StopIteration:
                        return bounds.last, records
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if not _unavailable(exc):
                raise
            raise StorageError("unavailable", None, str(exc)) from exc

    def change_marker(self) -> int | None:
        return self._changes.read()

    async def ping(self) -> None:
        self._read("SELECT 1", (), "ping")

    async def dump(self) -> AsyncIterator[DumpCounts | Row]:
        # Its own connection in one read transaction: WAL gives it a snapshot that commits by
        # the server (if one is running) do not change.
        conn = _connect(self.path)
        try:
            conn.execute("BEGIN")
            counts = conn.execute(st.COUNT_ROWS).fetchone()
            yield DumpCounts(*(int(n) for n in counts))
            for table, statement in st.DUMP_TABLES:
                cursor = conn.execute(statement)
                while batch := await asyncio.to_thread(cursor.fetchmany, DUMP_FETCH):
                    for row in batch:
                        yield st.dump_row(table, row, str.encode)
            conn.execute("COMMIT")
        finally:
            conn.close()

    async def is_empty(self) -> bool:
        return bool(self._read(st.STORE_IS_EMPTY, (), "meta")[0][0])

    async def load(self, rows: Sequence[Row]) -> None:
        await self._write("load", self._load_sync, rows)

    def _load_sync(self, rows: Sequence[Row]) -> None:
        def insert_all(conn: sqlite3.Connection) -> None:
            # AUTOINCREMENT keeps sqlite_sequence above every explicit seq inserted.
            for name, group in itertools.groupby((st.load_params(row) for row in rows), key=lambda p: p[0]):
                conn.executemany(SQL[name], [params for _, params in group])

        try:
            self._write_transaction(insert_all)
        except sqlite3.IntegrityError as exc:
            raise StorageError("exists", None, f"a loaded row is already stored: {exc}") from exc

    async def notify(self, channel: str, payload: str) -> None:
        """SQLite has no notification channel, so nothing is sent. Worker processes sharing
        one file learn of commits from the change counter instead (``sqlite_cache.py``)."""

    async def listen(self, channel: str, callback: NotifyCallback) -> None:
        """No notification ever arrives, so ``callback`` is never called."""

    async def close(self) -> None:
        if self._remote is not None:
            self._remote.close()
        self._write_thread.shutdown(wait=True)
        self._reader.close()
        self._writer.close()
        self._changes.close()


def _bounds(row: Sequence[Any]) -> ChangeBounds:
    horizon = int(row[0] or 0)
    return ChangeBounds(horizon, max(int(row[1] or 0), horizon))


__all__ = ["SqliteStorage", "migrate"]
