"""LISTEN on one dedicated PostgreSQL connection that comes back after it is lost.

Replicas tell each other to drop cached state through NOTIFY; this is the receiving end
(``PostgresStorage.listen``). A pooled connection cannot listen: the pool hands it to
other requests and recycles it, and notifications only reach the session that listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg
from psycopg import sql

from plinth.storage.base import NotifyCallback, StorageError

log = logging.getLogger(__name__)

#: How long one wait for notifications lasts before ``listen`` gets a turn on the connection.
POLL_SECONDS = 1.0
RECONNECT_FIRST_DELAY = 0.1
RECONNECT_MAX_DELAY = 5.0


class PostgresListener:
    """Delivers notifications on the channels asked for to their callbacks."""

    def __init__(self, conninfo: str, connect_timeout: int):
        self._conninfo = conninfo
        self._connect_timeout = connect_timeout
        self._callbacks: dict[str, list[NotifyCallback]] = {}
        self._conn: psycopg.AsyncConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self._setup = asyncio.Lock()

    async def listen(self, channel: str, callback: NotifyCallback) -> None:
        """See ``Storage.listen``. Raises ``StorageError("unavailable")`` if the first
        connection cannot be made."""
        async with self._setup:
            new_channel = channel not in self._callbacks
            self._callbacks.setdefault(channel, []).append(callback)
            if self._conn is None:
                try:
                    self._conn = await self._connect()
                except StorageError:
                    self._forget(channel, callback)
                    raise
                self._task = asyncio.create_task(self._receive(), name="plinth-pg-listener")
            elif new_channel:
                try:
                    await self._conn.execute(_listen_sql(channel))
                except psycopg.OperationalError:
                    # The receiving loop reconnects, listens on every channel again and
                    # then calls every callback with None, this one included.
                    pass

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    def _forget(self, channel: str, callback: NotifyCallback) -> None:
        self._callbacks[channel].remove(callback)
        if not self._callbacks[channel]:
            del self._callbacks[channel]

    async def _connect(self) -> psycopg.AsyncConnection:
        try:
            conn = await psycopg.AsyncConnection.connect(
                self._conninfo,
                autocommit=True,
                connect_timeout=self._connect_timeout,
                # Notice a silently dropped link too, not only a closed one.
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
            )
        except psycopg.OperationalError as exc:
            raise StorageError("unavailable", None, str(exc)) from exc
        try:
            for channel in list(self._callbacks):
                await conn.execute(_listen_sql(channel))
        except psycopg.OperationalError as exc:
            await conn.close()
            raise StorageError("unavailable", None, str(exc)) from exc
        return conn

    async def _receive(self) -> None:
        while True:
            assert self._conn is not None
            try:
                async with contextlib.aclosing(self._conn.notifies(timeout=POLL_SECONDS)) as notes:
                    async for note in notes:
                        self._dispatch(note.channel, note.payload)
            except psycopg.Error as exc:
                log.warning("lost the notification connection (%s); reconnecting", exc)
                await self._reconnect()

    async def _reconnect(self) -> None:
        if self._conn is not None:
            await self._conn.close()
        delay = RECONNECT_FIRST_DELAY
        while True:
            try:
                conn = await self._connect()
                break
            except StorageError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_DELAY)
        self._conn = conn
        # Whatever was sent while we were away is gone: tell everyone to start afresh.
        for channel in list(self._callbacks):
            self._dispatch(channel, None)

    def _dispatch(self, channel: str, payload: str | None) -> None:
        for callback in list(self._callbacks.get(channel, ())):
            try:
                callback(payload)
            except Exception:
                # One faulty subscriber must not stop the others from hearing of changes.
                log.exception("notification callback for %r failed", channel)


def _listen_sql(channel: str) -> sql.Composed:
    return sql.SQL("LISTEN {}").format(sql.Identifier(channel))
