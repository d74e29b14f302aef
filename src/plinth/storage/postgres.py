"""The multi-replica backend: PostgreSQL through a small psycopg 3 async connection pool.

Every replica runs the same migrations at start (yoyo's lock lets them race), shares the
tables, and tells the others about changes through LISTEN/NOTIFY. Documents are ``jsonb``
and come back as the bytes of their text form, never parsed. Failures to reach the server
turn into ``StorageError("unavailable")`` within a few seconds, so the API can answer 503
instead of hanging.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import psycopg
from psycopg import errors as pgerrors
from psycopg.adapt import Loader
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from yoyo.exceptions import LockTimeout

from plinth.storage import statements as st
from plinth.storage.base import (
    AppendEvent,
    Delete,
    EventRecord,
    Key,
    NotifyCallback,
    Operation,
    Put,
    Record,
    SetMeta,
    StorageError,
)
from plinth.storage.migrate import MIGRATIONS, migrate
from plinth.storage.postgres_listener import PostgresListener
from plinth.storage.query import ListRequest, Scalar
from plinth.storage.sqlbuild import Fragment, compile_list, join, sql

#: Seconds to wait for a new connection (libpq counts whole seconds, at least 2).
CONNECT_TIMEOUT = 3
#: Seconds a request waits for a pooled connection before the store counts as unavailable.
POOL_TIMEOUT = 3.0
#: psycopg prepares a statement server-side once it has run this many times on a connection.
PREPARE_THRESHOLD = 5


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
        # float8, as SQLite's REAL, so both backends order and compare numbers alike.
        p = self._path(path)
        return sql("CASE WHEN jsonb_typeof(doc #> {}) = 'number' THEN (doc #> {})::float8 END", p, p)

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


class _RawJsonLoader(Loader):
    """Hands jsonb over as the bytes PostgreSQL sent, instead of parsing it."""

    def load(self, data: bytes | bytearray | memoryview) -> bytes:
        return bytes(data)


async def _configure(conn: psycopg.AsyncConnection) -> None:
    conn.adapters.register_loader("jsonb", _RawJsonLoader)


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
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT, "prepare_threshold": PREPARE_THRESHOLD},
        )
        try:
            await pool.open(wait=True, timeout=pool_timeout)
        except PoolTimeout as exc:
            await pool.close()
            raise StorageError("unavailable", None, f"cannot connect: {exc}") from exc
        return cls(pool, url)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection]:
        try:
            async with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            # A dropped or refused connection; the pool replaces broken ones by itself.
            raise StorageError("unavailable", None, str(exc)) from exc

    async def _fetch(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        async with self._connection() as conn:
            cursor = await conn.execute(statement, params)
            return await cursor.fetchall()

    async def get(self, key: Key) -> Record | None:
        rows = await self._fetch(self._sql["SELECT_RESOURCE"], _key_params(key))
        if not rows:
            return None
        id_, version, doc = rows[0]
        return Record(key, id_, version, doc)

    async def list_page(self, request: ListRequest) -> list[Record]:
        query = compile_list(request, DIALECT, _SELECT_RECORD)
        try:
            return _records(await self._fetch(query.text, query.params))
        except pgerrors.InvalidRegularExpression as exc:
            raise StorageError("invalid", None, f"invalid regular expression: {exc}") from exc

    async def referrers(self, org: str, href: str, kinds: Sequence[str]) -> list[Record]:
        if not kinds:
            return []
        return _records(await self._fetch(st.render(st.referrers_sql(len(kinds)), "%s"), [org, href, *kinds]))

    async def commit(self, ops: Sequence[Operation]) -> None:
        async with self._connection() as conn, conn.transaction():
            for op in ops:
                await self._apply(conn, op)

    async def events(self, key: Key, after_seq: int, limit: int) -> list[EventRecord]:
        rows = await self._fetch(self._sql["SELECT_EVENTS"], (*_key_params(key), after_seq, limit))
        return [EventRecord(seq, doc) for seq, doc in rows]

    async def get_meta(self, name: str) -> str | None:
        rows = await self._fetch(self._sql["SELECT_META"], (name,))
        return None if not rows else str(rows[0][0])

    async def ping(self) -> None:
        await self._fetch("SELECT 1", ())

    async def notify(self, channel: str, payload: str) -> None:
        await self._fetch("SELECT pg_notify(%s, %s)", (channel, payload))

    async def listen(self, channel: str, callback: NotifyCallback) -> None:
        if self._listener is None:
            self._listener = PostgresListener(self._url, CONNECT_TIMEOUT)
        await self._listener.listen(channel, callback)

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.close()
        await self._pool.close()

    async def _apply(self, conn: psycopg.AsyncConnection, op: Operation) -> None:
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
            await conn.execute(q["DELETE_REFS"], _key_params(key))
            if op.refs:
                async with conn.cursor() as cursor:
                    rows = [(*_key_params(key), target) for target in sorted(set(op.refs))]
                    await cursor.executemany(q["INSERT_REF"], rows)
        elif isinstance(op, Delete):
            cursor = await conn.execute(q["DELETE_RESOURCE"], (*_key_params(op.key), op.expected_version))
            if cursor.rowcount != 1:
                raise await self._missing_or_conflict(conn, op.key)
            await conn.execute(q["DELETE_REFS"], _key_params(op.key))
        elif isinstance(op, AppendEvent):
            await conn.execute(q["INSERT_EVENT"], (*_key_params(op.key), op.id, op.created, op.doc.decode()))
        elif isinstance(op, SetMeta):
            await conn.execute(q["SET_META_IF_ABSENT" if op.only_if_absent else "SET_META"], (op.name, op.value))

    async def _missing_or_conflict(self, conn: psycopg.AsyncConnection, key: Key) -> StorageError:
        cursor = await conn.execute(self._sql["EXISTS_RESOURCE"], _key_params(key))
        return StorageError("not_found" if await cursor.fetchone() is None else "conflict", key)


def _key_params(key: Key) -> tuple[str, str, str, str]:
    return (key.org, key.kind, key.parent, key.name)


def _records(rows: list[tuple[Any, ...]]) -> list[Record]:
    return [Record(Key(r[0], r[1], r[2], r[3]), r[4], r[5], r[6]) for r in rows]


__all__ = ["PostgresDialect", "PostgresStorage"]
