"""The multi-replica backend: PostgreSQL through a small psycopg 3 async connection pool.

Every replica runs the same migrations at start (yoyo's lock lets them race), shares the
tables, and tells the others about changes through LISTEN/NOTIFY. Documents are ``jsonb``
and come back as the bytes of their text form, never parsed.

When the database goes away the API answers 503 within seconds and recovers by itself
(``tests/faults/test_store_outage.py``):

- every operation is bounded: a connection within ``POOL_TIMEOUT``, an answer within
  ``QUERY_TIMEOUT`` (a query stuck on a dead link is abandoned to finish in the background);
- a pooled connection the server has closed (restart, failover, terminated session) is seen
  before it is used, without a round trip, and replaced;
- the pool gives up replacing connections after ``RECONNECT_TIMEOUT`` and connects again on
  demand, so a request made after the database returns reaches it at once instead of waiting
  out an exponential backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import select
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import psycopg
from psycopg import errors as pgerrors
from psycopg.adapt import Loader
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from yoyo.exceptions import LockTimeout

from plinth.metrics import StoreMeter
from plinth.storage import statements as st
from plinth.storage.base import (
    AppendEvent,
    Change,
    ChangeBounds,
    Delete,
    DumpCounts,
    EventRecord,
    Key,
    MetaEntry,
    NotifyCallback,
    Operation,
    Put,
    Record,
    Row,
    SetMeta,
    StorageError,
    StoredEvent,
    Tally,
)
from plinth.storage.migrate import MIGRATIONS, migrate
from plinth.storage.postgres_listener import PostgresListener
from plinth.storage.query import ListRequest, Scalar, snapshot_pages
from plinth.storage.record_cache import CHANNEL, RecordCache, payload_for, written_keys
from plinth.storage.sqlbuild import Fragment, compile_list, join, sql

#: Seconds to wait for a new connection (libpq counts whole seconds, at least 2).
CONNECT_TIMEOUT = 3
#: Seconds a request waits for a pooled connection before the store counts as unavailable.
POOL_TIMEOUT = 3.0
#: ... and while the last operation found the database unreachable: a request then fails at
#: once unless a connection comes back in this time (each request still makes the pool try).
DOWN_POOL_TIMEOUT = 0.5
#: Seconds one operation (a read, or a whole commit) may take before the store counts as
#: unavailable; the server cancels its statements after as long (``statement_timeout``).
QUERY_TIMEOUT = 5.0
#: Seconds a query holding regular expressions may run (``storage/regex.py``; docs/api.md, "Limits").
REGEX_QUERY_TIMEOUT = 2.0
#: Seconds the pool keeps retrying, in the background, to replace a lost connection; after
#: that it connects again when a request needs a connection.
RECONNECT_TIMEOUT = 1.0
#: The server ends a transaction left open this long by a client it cannot hear from, so the
#: rows it locked do not stall the other replicas until TCP notices the client is gone.
IDLE_IN_TRANSACTION_TIMEOUT = 2 * QUERY_TIMEOUT
#: Notice a silently dropped link on an idle connection too, not only a closed one.
KEEPALIVES: dict[str, Any] = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
#: psycopg prepares a statement server-side once it has run this many times on a connection.
PREPARE_THRESHOLD = 5
#: Rows the server-side cursor of :meth:`PostgresStorage.dump` sends at a time.
DUMP_FETCH = 1000
#: Runs of a commit PostgreSQL rolls back (deadlock, serialization failure) before giving up,
#: with a random pause of up to this many seconds times the attempt between them.
ROLLED_BACK_ATTEMPTS = 5
ROLLED_BACK_PAUSE_S = 0.02
#: SQLSTATE class 40 (psycopg makes each a sibling, not a subclass, of ``TransactionRollback``).
ROLLED_BACK_BY_SERVER = (pgerrors.DeadlockDetected, pgerrors.SerializationFailure, pgerrors.TransactionRollback)


class _RolledBack(Exception):
    """A transaction PostgreSQL rolled back on its own; nothing of it was stored."""

    code = "rolled_back"  # as counted in plinth_store_errors


#: The transaction-scoped advisory lock that orders change seqs (not the migration lock's key).
CHANGES_LOCK_KEY = 0x706C696E7477  # "plintw"
#: After loading events with their own ``seq``, new events must number above them.
_ADVANCE_EVENT_SEQ = "SELECT setval(pg_get_serial_sequence('events', 'seq'), (SELECT max(seq) FROM events))"


class PostgresDialect:
    """``sqlbuild`` spelled with jsonb operators; the path is bound as a ``text[]``."""

    placeholder = "%s"

    def _path(self, path: tuple[str, ...]) -> Fragment:
        return Fragment("%s", (list(path),))

    def type_of(self, path: tuple[str, ...]) -> Fragment:
        p = self._path(path)
        # jsonb_typeof says 'boolean' for both; the text of a boolean tells which one.
        return sql(
            "CASE jsonb_typeof(doc #> {}) WHEN 'boolean' THEN doc #>> {} ELSE jsonb_typeof(doc #> {}) END", p, p, p
        )

    def number(self, path: tuple[str, ...]) -> Fragment:
        # numeric, exact as jsonb keeps it: SQLite's json_extract answers an INTEGER for an integer
        # (exact within 64 bits), so both stores compare integers exactly; a float8 here rounded
        # every integer beyond 2^53 (docs/api.md, "Queries"). Against a bound double PostgreSQL
        # compares as doubles, as SQLite does against a REAL.
        p = self._path(path)
        return sql("CASE WHEN jsonb_typeof(doc #> {}) = 'number' THEN (doc #> {})::numeric END", p, p)

    def string(self, path: tuple[str, ...]) -> Fragment:
        # jsonb compares strings in the database's collation; "C" is code point order.
        p = self._path(path)
        return sql("(CASE WHEN jsonb_typeof(doc #> {}) = 'string' THEN doc #>> {} END) COLLATE \"C\"", p, p)

    def text(self, path: tuple[str, ...]) -> Fragment:
        p = self._path(path)
        return sql("CASE WHEN jsonb_typeof(doc #> {}) IN ('string', 'number', 'boolean') THEN doc #>> {} END", p, p)

    def regex(self, subject: Fragment, pattern: Fragment) -> Fragment:
        return sql("{} ~ {}", subject, pattern)

    def tag_hint(self, tag: str, values: tuple[Scalar, ...] | None) -> Fragment | None:
        # Both forms must be spelled exactly (doc -> 'tags') for the GIN index to apply.
        if values is None:
            return Fragment("(doc -> 'tags') ? %s", (tag,))
        contains = [Fragment("(doc -> 'tags') @> %s::jsonb", (orjson.dumps({tag: v}).decode(),)) for v in values]
        return sql("({})", join(" OR ", contains))


DIALECT = PostgresDialect()
_SELECT_RECORD = "org, kind, parent, name, id, version, doc"
T = TypeVar("T")
log = logging.getLogger(__name__)


class _RawJsonLoader(Loader):
    """Hands jsonb over as the bytes PostgreSQL sent, instead of parsing it."""

    def load(self, data: bytes | bytearray | memoryview) -> bytes:
        return bytes(data)


async def _configure(conn: psycopg.AsyncConnection) -> None:
    conn.adapters.register_loader("jsonb", _RawJsonLoader)
    await conn.execute(
        "SELECT set_config('statement_timeout', %s, false),"
        " set_config('idle_in_transaction_session_timeout', %s, false)",
        (f"{int(QUERY_TIMEOUT * 1000)}ms", f"{int(IDLE_IN_TRANSACTION_TIMEOUT * 1000)}ms"),
    )


def _bounded(statement: str, params: Sequence[Any]) -> Callable[[psycopg.AsyncConnection], Awaitable[list[Any]]]:
    """Run a query holding regular expressions within :data:`REGEX_QUERY_TIMEOUT` (its own
    transaction's ``statement_timeout``): PostgreSQL runs its own regex engine on them, and one
    that runs out of time is the client's 400, not an outage (``StorageError("invalid")``)."""

    async def fetch(conn: psycopg.AsyncConnection) -> list[Any]:
        try:
            async with conn.transaction():
                timeout = f"{int(REGEX_QUERY_TIMEOUT * 1000)}ms"
                await conn.execute("SELECT set_config('statement_timeout', %s, true)", (timeout,))
                cursor = await conn.execute(statement, params)
                return await cursor.fetchall()
        except pgerrors.QueryCanceled as exc:
            if conn.info.transaction_status != TransactionStatus.IDLE:
                raise  # not the statement's own timeout: the connection is in doubt
            message = f"the query's regular expressions took longer than {REGEX_QUERY_TIMEOUT:g} s; narrow them"
            raise StorageError("invalid", None, message) from exc

    return fetch


def _closed_by_server(conn: psycopg.AsyncConnection) -> bool:
    """Whether an idle pooled connection is dead, without a round trip.

    An idle session has nothing to say: if its socket is readable, the server has closed it
    (or sent the error that precedes closing). A false alarm only costs a reconnect.
    """
    if conn.closed:
        return True
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable)


def yoyo_url(url: str) -> str:
    """The same database as yoyo names it, with a connect timeout unless one is given."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.setdefault("connect_timeout", str(CONNECT_TIMEOUT))
    return urlunsplit(("postgresql+psycopg", parts.netloc, parts.path, urlencode(query), parts.fragment))


class PostgresStorage:
    """PostgreSQL implementation of :class:`plinth.storage.base.Storage`."""

    def __init__(self, pool: AsyncConnectionPool, url: str):
        self._pool = pool
        self._url = url
        self._listener: PostgresListener | None = None
        self._sql = st.rendered("%s")
        self._available = True
        #: Operations given up on after QUERY_TIMEOUT, still cancelling on their connection.
        self._abandoned: set[asyncio.Task[Any]] = set()
        #: Records by key, coherent across replicas through NOTIFY (see record_cache.py);
        #: used only once this process listens for the invalidations.
        self._cache = RecordCache()
        self._caching = False
        self._meter = StoreMeter("postgresql")

    @classmethod
    async def open(
        cls, url: str, *, min_size: int = 1, max_size: int = 8, pool_timeout: float = POOL_TIMEOUT
    ) -> PostgresStorage:
        """Migrate the database at ``url`` (``postgresql://`` or ``postgres://``) and connect.

        Raises ``StorageError("unavailable")`` if the server cannot be reached in time.
        """
        try:
            await asyncio.to_thread(migrate, yoyo_url(url), MIGRATIONS / "postgres")
        except (psycopg.OperationalError, LockTimeout) as exc:
            raise StorageError("unavailable", None, f"cannot migrate the database: {exc}") from exc
        pool: AsyncConnectionPool = AsyncConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            timeout=pool_timeout,
            open=False,
            configure=_configure,
            reconnect_timeout=RECONNECT_TIMEOUT,
            kwargs={
                "autocommit": True,
                "connect_timeout": CONNECT_TIMEOUT,
                "prepare_threshold": PREPARE_THRESHOLD,
                **KEEPALIVES,
            },
        )
        try:
            await pool.open(wait=True, timeout=pool_timeout)
        except PoolTimeout as exc:
            await pool.close()
            raise StorageError("unavailable", None, f"cannot connect: {exc}") from exc
        storage = cls(pool, url)
        try:
            await storage.listen(CHANNEL, storage._cache.on_notification)
            storage._caching = True
        except Exception as exc:  # no listener: serve every read from the database
            log.warning("record cache off: cannot listen for invalidations (%s)", exc)
        return storage

    async def _run(self, work: Callable[[psycopg.AsyncConnection], Awaitable[T]], operation: str) -> T:
        """``work`` on a pooled connection, answered within ``QUERY_TIMEOUT`` whatever the
        network does. Raises ``StorageError("unavailable")`` when it cannot be. Measured as
        ``operation`` (``plinth.metrics``), the wait for a connection included."""
        started = time.perf_counter()
        try:
            return await self._run_within_timeout(work)
        except Exception as exc:
            self._meter.failed(operation, exc.code if isinstance(exc, StorageError | _RolledBack) else "error")
            raise
        finally:
            self._meter.observe(operation, time.perf_counter() - started)

    async def _run_within_timeout(self, work: Callable[[psycopg.AsyncConnection], Awaitable[T]]) -> T:
        task = asyncio.ensure_future(self._on_connection(work))
        try:
            await asyncio.wait((task,), timeout=QUERY_TIMEOUT)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not task.done():
            # psycopg answers a cancellation by cancelling the query on the server, which on a
            # dead link takes seconds more; the pool drops the connection once it is done.
            task.cancel()
            self._abandoned.add(task)
            task.add_done_callback(_forget_abandoned(self._abandoned))
            raise self._down(f"the database did not answer within {QUERY_TIMEOUT:g} s", None)
        return task.result()

    async def _on_connection(self, work: Callable[[psycopg.AsyncConnection], Awaitable[T]]) -> T:
        budget = self._pool.timeout if self._available else DOWN_POOL_TIMEOUT
        deadline = time.monotonic() + budget
        try:
            while True:
                conn = await self._pool.getconn(timeout=max(deadline - time.monotonic(), 0.001))
                if not _closed_by_server(conn):
                    break
                await conn.close()
                await self._pool.putconn(conn)  # the pool discards it and connects a replacement
            try:
                result = await work(conn)
            finally:
                await self._pool.putconn(conn)
        except PoolTimeout as exc:
            raise self._down(f"no database connection within {budget:g} s", exc) from exc
        except psycopg.OperationalError as exc:
            # A dropped or refused connection (the pool replaces it), or a statement the
            # server cancelled after statement_timeout.
            raise self._down("lost the connection to the database", exc) from exc
        if not self._available:
            self._available = True
            log.warning("the database is available again")
        return result

    def _down(self, message: str, cause: Exception | None) -> StorageError:
        """The error for an unreachable store; logged (with the driver's words) once per outage."""
        if self._available:
            self._available = False
            log.warning("the database is unavailable: %s%s", message, f" ({cause})" if cause else "")
        return StorageError("unavailable", None, message)

    async def _fetch(self, statement: str, params: Sequence[Any], operation: str) -> list[tuple[Any, ...]]:
        async def fetch(conn: psycopg.AsyncConnection) -> list[tuple[Any, ...]]:
            cursor = await conn.execute(statement, params)
            return await cursor.fetchall()

        return await self._run(fetch, operation)

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None:
        if self._caching and self._available and not fresh:
            cached = self._cache.get(key)
            if cached is not None:
                self._meter.hits.inc()
                return cached if isinstance(cached, Record) else None  # ABSENT: known missing
            self._meter.misses.inc()
        ticket = self._cache.ticket(key)
        rows = await self._fetch(self._sql["SELECT_RESOURCE"], _key_params(key), "get")
        if not rows:
            if self._caching:
                self._cache.put_absent(key, ticket)
            return None
        id_, version, doc = rows[0]
        record = Record(key, id_, version, doc)
        if self._caching:
            self._cache.put(record, ticket)
        return record

    async def list_page(self, request: ListRequest) -> list[Record]:
        query = compile_list(request, DIALECT, _SELECT_RECORD)
        try:
            if not any(term.op in ("~", "=~") for term in request.filter.terms):
                return _records(await self._fetch(query.text, query.params, "list"))
            return _records(await self._run(_bounded(query.text, query.params), "list"))
        except pgerrors.InvalidRegularExpression as exc:
            raise StorageError("invalid", None, f"invalid regular expression: {exc}") from exc

    async def referrers(self, org: str, href: str, kinds: Sequence[str]) -> list[Record]:
        if not kinds:
            return []
        statement = st.render(st.referrers_sql(len(kinds)), "%s")
        return _records(await self._fetch(statement, [org, href, *kinds], "referrers"))

    async def commit(self, ops: Sequence[Operation]) -> None:
        """One transaction. One that PostgreSQL rolled back to break a deadlock (or for a
        serialization failure) changed nothing and is run again, up to
        :data:`ROLLED_BACK_ATTEMPTS` times; its preconditions are checked anew each time."""
        keys = written_keys(ops)

        async def apply_all(conn: psycopg.AsyncConnection) -> None:
            try:
                await conn.execute("BEGIN")
                try:
                    changes: list[tuple[Any, ...]] = []
                    for op in ops:
                        await self._apply(conn, op, changes)
                    # The tail in one flight (a pipeline): the change log's lock is held for one
                    # round trip, not one per statement.
                    async with conn.pipeline():
                        if changes:
                            await self._append_changes(conn, changes)
                        if keys:
                            # Delivered at commit, to every replica's record cache (this one's too).
                            await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload_for(keys)))
                        await conn.execute("COMMIT")
                except BaseException:
                    if conn.info.transaction_status != TransactionStatus.IDLE:
                        with contextlib.suppress(Exception):
                            await conn.execute("ROLLBACK")
                    raise
            except ROLLED_BACK_BY_SERVER as exc:
                raise _RolledBack(exc) from exc  # not a lost connection: keep it from _on_connection

        try:
            for attempt in range(1, ROLLED_BACK_ATTEMPTS + 1):
                try:
                    await self._run(apply_all, "commit")
                    return
                except _RolledBack as exc:
                    if attempt == ROLLED_BACK_ATTEMPTS:
                        raise StorageError("conflict", None, f"rolled back {attempt} times: {exc}") from exc
                    log.info("transaction rolled back (%s); running it again", exc.__cause__)
                    await asyncio.sleep(random.uniform(0, ROLLED_BACK_PAUSE_S * attempt))
        finally:
            # Whatever happened, the next read of these keys goes to the database: after a
            # success it sees this write, after a lost compare-and-swap the winner's.
            self._cache.evict(keys)

    async def events(self, key: Key, after_seq: int, limit: int) -> list[EventRecord]:
        rows = await self._fetch(self._sql["SELECT_EVENTS"], (*_key_params(key), after_seq, limit), "events")
        return [EventRecord(seq, doc) for seq, doc in rows]

    async def meta_with_prefix(self, prefix: str) -> list[MetaEntry]:
        rows = await self._fetch(self._sql["SELECT_META_PREFIX"], (prefix, prefix), "meta")
        return [MetaEntry(str(r[0]), str(r[1])) for r in rows]

    async def get_meta(self, name: str) -> str | None:
        rows = await self._fetch(self._sql["SELECT_META"], (name,), "meta")
        return None if not rows else str(rows[0][0])

    async def changes(self, after_seq: int, limit: int) -> list[Change]:
        rows = await self._fetch(self._sql["SELECT_CHANGES"], (after_seq, limit), "changes")
        return [st.change_row(r, bytes) for r in rows]

    async def change_bounds(self) -> ChangeBounds:
        return _bounds((await self._fetch(st.CHANGE_BOUNDS, (), "changes"))[0])

    async def trim_changes(self, keep: int, max_age_s: float) -> ChangeBounds:
        q = self._sql

        async def trim(conn: psycopg.AsyncConnection) -> None:
            async with conn.transaction():
                cursor = await conn.execute(q["TRIM_CUTOFF"], (keep, time.time() - max_age_s))
                row = await cursor.fetchone()
                if row is not None and row[0] is not None:
                    await conn.execute(q["TRIM_CHANGES"], (row[0],))
                    await conn.execute(q["SET_META"], (st.CHANGES_HORIZON_META, str(row[0])))

        await self._run(trim, "trim")
        return await self.change_bounds()

    async def snapshot(self, request: ListRequest) -> tuple[int, list[Record]]:
        async def read(conn: psycopg.AsyncConnection) -> tuple[int, list[Record]]:
            async with conn.transaction():
                # One snapshot for the bounds and every page; seq order being commit order, it
                # holds exactly the changes up to the newest seq it sees.
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                cursor = await conn.execute(st.CHANGE_BOUNDS)
                row = await cursor.fetchone()
                assert row is not None
                records: list[Record] = []
                pages = snapshot_pages(request)
                page = next(pages)
                while True:
                    query = compile_list(page, DIALECT, _SELECT_RECORD)
                    cursor = await conn.execute(query.text, query.params)
                    batch = _records(await cursor.fetchall())
                    records += batch
                    try:
                        page = pages.send(batch)
                    except StopIteration:
                        return _bounds(row).last, records

        try:
            return await self._run(read, "snapshot")
        except pgerrors.InvalidRegularExpression as exc:
            raise StorageError("invalid", None, f"invalid regular expression: {exc}") from exc

    def change_marker(self) -> int | None:
        return None

    async def ping(self) -> None:
        await self._fetch("SELECT 1", (), "ping")

    async def dump(self) -> AsyncIterator[DumpCounts | Row]:
        # A connection of its own, outside the pool's statement_timeout, in one REPEATABLE READ
        # transaction: every table is read from the same snapshot while replicas keep writing.
        try:
            conn = await psycopg.AsyncConnection.connect(self._url, connect_timeout=CONNECT_TIMEOUT, **KEEPALIVES)
        except psycopg.OperationalError as exc:
            raise StorageError("unavailable", None, f"cannot connect: {exc}") from exc
        try:
            conn.adapters.register_loader("jsonb", _RawJsonLoader)
            await conn.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
            await conn.set_read_only(True)
            async with conn.transaction():
                cursor = await conn.execute(st.COUNT_ROWS)
                counts = await cursor.fetchone()
                assert counts is not None
                yield DumpCounts(*(int(n) for n in counts))
                for table, statement in st.DUMP_TABLES:
                    async with conn.cursor(name=f"plinth_dump_{table}") as rows:
                        rows.itersize = DUMP_FETCH
                        await rows.execute(statement)
                        async for row in rows:
                            yield st.dump_row(table, row, bytes)
        except psycopg.OperationalError as exc:
            raise StorageError("unavailable", None, f"lost the connection to the database: {exc}") from exc
        finally:
            await conn.close()

    async def is_empty(self) -> bool:
        rows = await self._fetch(self._sql["STORE_IS_EMPTY"], (), "meta")
        return bool(rows[0][0])

    async def load(self, rows: Sequence[Row]) -> None:
        async def insert_all(conn: psycopg.AsyncConnection) -> None:
            async with conn.transaction(), conn.cursor() as cursor:
                for name, group in itertools.groupby((st.load_params(row) for row in rows), key=lambda p: p[0]):
                    await cursor.executemany(self._sql[name], [params for _, params in group])
                if any(isinstance(row, StoredEvent) for row in rows):
                    await cursor.execute(_ADVANCE_EVENT_SEQ)

        try:
            await self._run(insert_all, "load")
        except pgerrors.UniqueViolation as exc:
            raise StorageError("exists", None, f"a loaded row is already stored: {exc}") from exc

    async def notify(self, channel: str, payload: str) -> None:
        await self._fetch("SELECT pg_notify(%s, %s)", (channel, payload), "notify")

    async def listen(self, channel: str, callback: NotifyCallback) -> None:
        if self._listener is None:
            self._listener = PostgresListener(self._url, CONNECT_TIMEOUT)
        await self._listener.listen(channel, callback)

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.close()
        for task in self._abandoned:
            task.cancel()
        if self._abandoned:
            await asyncio.wait(self._abandoned, timeout=1)
        await self._pool.close()

    async def _append_changes(self, conn: psycopg.AsyncConnection, changes: list[tuple[Any, ...]]) -> None:
        """The change log's rows, last in the transaction and under a transaction-scoped advisory
        lock: a seq is drawn only while no other transaction that drew one is still uncommitted
        (the lock is released after the commit is visible), so seq order is commit order and a
        watcher that has read seq N can never later find a lower one commit. ``commit`` sends
        these, its NOTIFY and the COMMIT in one pipeline, so the lock is held for about one round
        trip; commits that NOTIFY are serialized by PostgreSQL at commit already."""
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (CHANGES_LOCK_KEY,))
        at = time.time()
        for change in changes:
            await conn.execute(self._sql["INSERT_CHANGE"], (*change, at))

    async def _apply(self, conn: psycopg.AsyncConnection, op: Operation, changes: list[tuple[Any, ...]]) -> None:
        q = self._sql
        if isinstance(op, Put):
            rec, key = op.record, op.record.key
            doc = rec.doc.decode()
            if op.expected_version is None:
                try:
                    await conn.execute(q["INSERT_RESOURCE"], (*_key_params(key), rec.id, rec.version, doc))
                except pgerrors.UniqueViolation as exc:
                    raise StorageError("exists", key) from exc
            else:
                cursor = await conn.execute(
                    q["UPDATE_RESOURCE"], (rec.id, rec.version, doc, *_key_params(key), op.expected_version)
                )
                if cursor.rowcount != 1:
                    raise await self._missing_or_conflict(conn, key)
            change = st.put_change(op)
            if change is not None:
                changes.append(change)
            await conn.execute(q["DELETE_REFS"], _key_params(key))
            if op.refs:
                async with conn.cursor() as cursor:
                    rows = [(*_key_params(key), target) for target in sorted(set(op.refs))]
                    await cursor.executemany(q["INSERT_REF"], rows)
        elif isinstance(op, Delete):
            where = (*_key_params(op.key), op.expected_version)
            if op.watched:
                cursor = await conn.execute(q["DELETE_RESOURCE_RETURNING"], where)
                row = await cursor.fetchone()
                if row is None:
                    raise await self._missing_or_conflict(conn, op.key)
                changes.append(st.delete_change(op, bytes(row[0]).decode()))
            else:
                cursor = await conn.execute(q["DELETE_RESOURCE"], where)
                if cursor.rowcount != 1:
                    raise await self._missing_or_conflict(conn, op.key)
            await conn.execute(q["DELETE_REFS"], _key_params(op.key))
        elif isinstance(op, AppendEvent):
            await conn.execute(q["INSERT_EVENT"], (*_key_params(op.key), op.id, op.created, op.doc.decode()))
        elif isinstance(op, SetMeta):
            statement, params = st.set_meta(op)
            await conn.execute(q[statement], params)
        elif isinstance(op, Tally):
            params = st.tally_params(op, _key_params(op.key), lambda field: field)
            cursor = await conn.execute(q["TALLY_POSTGRES"], params)
            row = await cursor.fetchone()
            if row is not None:
                changes.append(st.tally_change(op, bytes(row[0]).decode()))
            else:
                exists = await conn.execute(q["EXISTS_RESOURCE"], _key_params(op.key))
                if await exists.fetchone() is not None:
                    raise StorageError("limit", op.key)

    async def _missing_or_conflict(self, conn: psycopg.AsyncConnection, key: Key) -> StorageError:
        cursor = await conn.execute(self._sql["EXISTS_RESOURCE"], _key_params(key))
        return StorageError("not_found" if await cursor.fetchone() is None else "conflict", key)


def _forget_abandoned(tasks: set[asyncio.Task[Any]]) -> Callable[[asyncio.Task[Any]], None]:
    def forget(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: its failure was already reported as "unavailable"

    return forget


def _bounds(row: Sequence[Any]) -> ChangeBounds:
    horizon = int(row[0] or 0)
    return ChangeBounds(horizon, max(int(row[1] or 0), horizon))


def _key_params(key: Key) -> tuple[str, str, str, str]:
    return (key.org, key.kind, key.parent, key.name)


def _records(rows: list[tuple[Any, ...]]) -> list[Record]:
    return [Record(Key(r[0], r[1], r[2], r[3]), r[4], r[5], r[6]) for r in rows]


__all__ = ["PostgresDialect", "PostgresStorage"]
