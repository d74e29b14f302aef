"""One holder per store: a named lock that at most one process of a store holds at a time.

Some work must run once per store, however many workers and replicas serve it (the runtime
controller: two controllers on the same containers would fight over them). :func:`exclusive`
answers an :class:`Exclusive` for a name; :meth:`Exclusive.try_acquire` takes it if nobody
holds it, and it stays held until :meth:`Exclusive.release` or the holder's death:

- **PostgreSQL**: a session-level advisory lock (``pg_try_advisory_lock``) on a connection of
  its own, kept open while the lock is held. The lock's id is the first 8 bytes of
  SHA-256(name). When the holder dies (or the database restarts, or the connection is cut),
  the session ends and PostgreSQL drops the lock; a waiter's next try gets it. The holder
  learns of a lost connection from :meth:`Exclusive.still_held` (a query on that connection).
- **SQLite** (one machine): ``flock`` on ``{data_dir}/{name}.lock``, held by an open file.
  The kernel drops it when the holder exits however it exits; the file itself holds nothing.

The lock is advisory: it guards only work that asks for it. Names are the caller's; storage
knows nothing of what they guard.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from pathlib import Path
from typing import Protocol

#: Seconds a connection attempt to PostgreSQL may take.
CONNECT_TIMEOUT_S = 5


class Exclusive(Protocol):
    """A named lock of one store (module docstring)."""

    async def try_acquire(self) -> bool:
        """Take the lock if free (``True``), or say it is held elsewhere (``False``); an
        unreachable store answers ``False`` too, for the caller to try again later."""
        ...

    async def still_held(self) -> bool:
        """Whether this process still holds it (``False`` once its connection is lost)."""
        ...

    async def release(self) -> None:
        """Let it go (nothing when not held)."""
        ...


def lock_id(name: str) -> int:
    """The advisory lock id for ``name``: a signed 64-bit integer, as PostgreSQL takes it."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class FileLock:
    """``flock`` on a file in the data directory (SQLite stores)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    async def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    async def still_held(self) -> bool:
        return self._fd is not None

    async def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the flock


class AdvisoryLock:
    """``pg_try_advisory_lock`` on a dedicated PostgreSQL connection."""

    def __init__(self, conninfo: str, name: str) -> None:
        self.conninfo = conninfo
        self.key = lock_id(name)
        self._conn: object | None = None

    async def try_acquire(self) -> bool:
        import psycopg

        if self._conn is not None:
            return await self.still_held()
        try:
            conn = await psycopg.AsyncConnection.connect(
                self.conninfo,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                keepalives=1,  # a silently dropped link is noticed too
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
            )
        except psycopg.OperationalError:
            return False
        try:
            row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))).fetchone()
        except psycopg.Error:
            await conn.close()
            return False
        if not row or not row[0]:
            await conn.close()
            return False
        self._conn = conn
        return True

    async def still_held(self) -> bool:
        import psycopg

        conn = self._conn
        if conn is None:
            return False
        assert isinstance(conn, psycopg.AsyncConnection)
        try:
            await conn.execute("SELECT 1")
            return True
        except psycopg.Error:  # the session is gone, and the lock with it
            await self.release()
            return False

    async def release(self) -> None:
        import psycopg

        conn, self._conn = self._conn, None
        if conn is None:
            return
        assert isinstance(conn, psycopg.AsyncConnection)
        with contextlib.suppress(psycopg.Error):
            await conn.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
        with contextlib.suppress(psycopg.Error):
            await conn.close()


def exclusive(database_url: str | None, data_dir: Path, name: str) -> Exclusive:
    """The lock called ``name`` of the store that ``open_storage(database_url, data_dir)`` opens."""
    if database_url and database_url.startswith(("postgresql://", "postgres://")):
        return AdvisoryLock(database_url, name)
    base = Path(database_url.removeprefix("sqlite:///")).parent if database_url else data_dir
    return FileLock(base / f"{name}.lock")
