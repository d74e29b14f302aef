"""A per-process cache of records read from SQLite, exact across worker processes.

Worker processes share one database file, and any of them may commit. They also share a change
counter: 8 bytes in the file ``<database>-changes``, mapped into every process. The counter is a
sequence lock. A commit takes an exclusive ``flock`` on that file, makes the counter odd, commits,
and makes it even again before it answers. A process serves a record from its cache only while
the counter is even and equal to the value it saw when it last dropped its cache; a new even
value drops the cache, and an odd one bypasses it. A process's own commit does not drop it: the
process knows what it wrote, so it drops those keys alone and moves on to the new value
(:meth:`SqliteRecordCache.advance`), which keeps a lone writer's cache warm under writes. So a
read through any worker sees every write acknowledged before the read began, as it would without
a cache, and a read that hits the cache costs one memory load instead of a statement, two file
locks and a ``stat``.

A commit that dies between the two steps leaves the counter odd: every process then reads SQLite
itself until the next commit, which finds the counter odd and moves on from there. Programs other
than Plinth that write the database do not move the counter; the cache is also dropped every
:data:`TTL_S` seconds, which bounds how long their changes may go unseen.

The counter's file is Plinth's own: SQLite never opens it, so opening and closing it cannot
release any of SQLite's POSIX locks (closing *any* descriptor of a file drops all of the process's
``fcntl`` locks on it, which is why this cache does not read SQLite's own ``-shm`` file).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from plinth.storage.base import Key, Record

COUNTER_BYTES = 8
#: As for PostgreSQL's (``record_cache.py``): about 10-20 MB of domain-sized records.
MAX_ENTRIES = 10_000
#: How long changes made by programs other than Plinth may go unseen.
TTL_S = 2.0


@dataclass(slots=True)
class Span:
    """The counter's value when a commit took the lock, and when it let go (``None`` until then)."""

    before: int
    after: int | None = None


class ChangeCounter:
    """The shared sequence lock of one database (``<database>-changes``)."""

    def __init__(self, db_path: Path):
        self.path = db_path.with_name(db_path.name + "-changes")
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(self._fd).st_size < COUNTER_BYTES:
                os.ftruncate(self._fd, COUNTER_BYTES)  # never shrinks: a racing process's value stays
            self._map = mmap.mmap(self._fd, COUNTER_BYTES)
        except BaseException:
            os.close(self._fd)
            raise
        self._value = memoryview(self._map).cast("Q")

    def read(self) -> int:
        """The counter: even when no commit is in progress (or died in progress)."""
        return int(self._value[0])

    @contextmanager
    def writing(self) -> Iterator[Span]:
        """Hold the counter odd around a commit.

        Commits of other processes wait for the lock in the kernel's queue, which also spares
        them SQLite's busy handler. (Polling for it, as that handler does, let one busy worker
        starve another for a second: the sleeper kept missing the moments the lock was free.)
        The wait has no time limit of its own: a holder holds the lock for one commit, which
        SQLite's ``busy_timeout`` bounds, and the kernel releases the lock of a dead holder.
        The :class:`Span` yielded says, once the block is left, which values the commit moved
        the counter between (:meth:`SqliteRecordCache.advance`)."""
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            value = self._value[0]
            span = Span(int(value))
            self._value[0] = value + (1 if value % 2 == 0 else 2)  # odd: a commit is under way
            try:
                yield span
            finally:
                self._value[0] = self._value[0] + 1  # even: committed (or rolled back)
                span.after = int(self._value[0])
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self._value.release()
        self._map.close()
        os.close(self._fd)


class SqliteRecordCache:
    """Records by key, served while the change counter stays at the value they were read under."""

    def __init__(self, counter: ChangeCounter, max_entries: int = MAX_ENTRIES, ttl: float = TTL_S):
        self._counter = counter
        self._max = max_entries
        self._ttl = ttl
        self._entries: dict[Key, Record] = {}
        self._seen = -1
        self._expires = 0.0

    def get(self, key: Key) -> Record | None:
        """The cached record, or ``None``: then read SQLite and :meth:`put` what it returned
        before anything else runs. A commit that began after this look changes the counter, so
        the record is dropped at the next look even if it is older than that commit."""
        seen = self._counter.read()
        if seen != self._seen or time.monotonic() >= self._expires:
            self._entries.clear()
            self._seen = seen
            self._expires = time.monotonic() + self._ttl
            return None
        return self._entries.get(key)

    def advance(self, span: Span, written: Iterable[Key]) -> None:
        """This process's own commit moved the counter across ``span`` and wrote ``written``:
        keep the other entries instead of dropping them all at the next look.

        Only when the cache was valid at ``span.before``: no other process committed between
        the cache's last drop and this commit (the commit held the lock from ``before`` to
        ``after``), so every entry not written is still exact at ``after``. Must run on the
        thread that calls :meth:`get` and :meth:`put` (the event loop), between two of them: a
        read that looked at ``before`` and read a written key after the commit, or before it,
        has put it already, and it is dropped here. If another process commits after ``after``,
        the next look sees a value other than ``after`` and drops everything as usual."""
        if span.after is None or span.before % 2 or self._seen != span.before:
            return
        for key in written:
            self._entries.pop(key, None)
        self._seen = span.after

    def put(self, record: Record) -> None:
        if self._seen % 2:
            return  # a commit is under way, or died under way: nothing read now is kept
        if len(self._entries) >= self._max:
            self._entries.clear()
        self._entries[record.key] = record
