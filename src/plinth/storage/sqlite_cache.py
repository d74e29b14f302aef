"""A per-process cache of records read from SQLite, exact across worker processes.

Worker processes share one database file, and any of them may commit. They also share a change
counter: 8 bytes in the file ``<database>-changes``, mapped into every process. The counter is a
sequence lock. A commit takes an exclusive ``flock`` on that file, makes the counter odd, commits,
and makes it even again before it answers. A process serves a record from its cache only while
the counter is even and equal to the value it saw when it last dropped its cache; a new even
value drops the cache, and an odd one bypasses it (but see below for a commit under way). A
process's own commit does not drop it: the process knows what it wrote, so it drops those keys
alone and moves on to the new value (:meth:`SqliteRecordCache.get`), which keeps a lone writer's
cache warm under writes; and each commit records the keys it wrote beside the counter
(``sqlite_ring.py``), so another process's commit drops those keys alone. While another
process's commit is under way (the counter odd and the lock held), the cache serves the state
before it, none of whose writes is acknowledged yet, and keeps nothing read meanwhile; with two
workers writing, one of them commits most of the time, and dropping the cache at each such look
kept it nearly empty. So a read through any worker sees every write acknowledged before the
read began, as it would without a cache, and a read that hits the cache costs one memory load
instead of a statement, two file locks and a ``stat``.

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
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from plinth.storage import sqlite_ring
from plinth.storage.base import Key, Record

COUNTER_BYTES = 8
#: The counter, then what recent commits wrote (``sqlite_ring.py``).
FILE_BYTES = COUNTER_BYTES + 8 * sqlite_ring.WORDS
#: As for PostgreSQL's (``record_cache.py``): about 10-20 MB of domain-sized records.
MAX_ENTRIES = 10_000
#: This process's finished commits kept for its cache to catch up with, at most (a process
#: that writes without reading would otherwise keep them all).
MAX_DONE = 256
#: How long changes made by programs other than Plinth may go unseen.
TTL_S = 2.0


class Absent:
    """What the cache holds for a key read and found not stored (:data:`ABSENT`)."""

    __slots__ = ()


#: A key read and found not stored: kept like a record, so a write to the key (this process's,
#: or another's through the ring) replaces or drops it as it would a record. A write links to
#: items that may not exist (a domain's route to a workload not created yet); without it each
#: such link cost a statement per write.
ABSENT = Absent()


@dataclass(slots=True)
class Span:
    """One commit of this process: the counter's value when it took the lock, the value it
    leaves, and what it wrote: each key's new record, or ``None`` when it is deleted or its
    record is computed by SQL (``None`` for the whole: unknown, so the cache is dropped as
    for a commit of another process)."""

    before: int
    after: int = -1
    written: dict[Key, Record | None] | None = None


class ChangeCounter:
    """The shared sequence lock of one database (``<database>-changes``), and what this
    process knows of its own commits (:class:`SqliteRecordCache` reads both)."""

    def __init__(self, db_path: Path, keeps_own: bool = True):
        """``keeps_own``: whether this process keeps its commits for a record cache of its own
        (the server's committer, ``sqlite_committer.py``, has none)."""
        self.path = db_path.with_name(db_path.name + "-changes")
        self._keeps_own = keeps_own
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(self._fd).st_size < FILE_BYTES:
                os.ftruncate(self._fd, FILE_BYTES)  # never shrinks: a racing process's value stays
            self._map = mmap.mmap(self._fd, FILE_BYTES)
            #: A description of its own, to ask whether another holds the lock: a ``flock`` on
            #: ``_fd`` would convert this process's own lock instead of meeting it.
            self._probe = os.open(self.path, os.O_RDONLY)
        except BaseException:
            os.close(self._fd)
            raise
        self._value = memoryview(self._map).cast("Q")
        self.ring = sqlite_ring.Ring(self._value)
        #: The commit this process is making, while it holds the lock.
        self.own: Span | None = None
        #: This process's finished commits with known keys, oldest first, for the cache to
        #: catch up with (:meth:`SqliteRecordCache.get`); guarded by ``_done_lock``.
        self._done: list[Span] = []
        self._done_lock = threading.Lock()

    def read(self) -> int:
        """The counter: even when no commit is in progress (or died in progress)."""
        return int(self._value[0])

    @contextmanager
    def writing(self, written: dict[Key, Record | None] | None = None) -> Iterator[Span]:
        """Hold the counter odd around a commit.

        Commits of other processes wait for the lock in the kernel's queue, which also spares
        them SQLite's busy handler. (Polling for it, as that handler does, let one busy worker
        starve another for a second: the sleeper kept missing the moments the lock was free.)
        The wait has no time limit of its own: a holder holds the lock for one commit, which
        SQLite's ``busy_timeout`` bounds, and the kernel releases the lock of a dead holder.

        ``written``: a dict the caller fills, inside the block, with every record the commit
        writes (:class:`Span`). Given, a commit that leaves the block without an exception is
        recorded (before the counter turns even) for this process's cache to update those keys
        alone instead of dropping everything."""
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            value = int(self._value[0])
            span = Span(value, written=written)
            self.own = span  # set before the counter turns odd: a reader seeing odd may trust it
            self._value[0] = value + (1 if value % 2 == 0 else 2)  # odd: a commit is under way
            committed = False
            try:
                yield span
                committed = True
            finally:
                span.after = int(self._value[0]) + 1
                if value % 2 == 0:  # for the other processes' caches (a failed commit: unknown)
                    self.ring.record(value, written if committed and written is not None else None)
                if committed and written is not None and value % 2 == 0 and self._keeps_own:
                    self.add_finished(span)  # recorded before the counter shows ``after``
                self._value[0] = span.after  # even: committed (or rolled back)
                self.own = None
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def add_finished(self, span: Span) -> None:
        """Record a finished commit whose writes this process knows: its own, or one the
        server's committer made for it and told it of (``sqlite_remote.py``). One recorded
        after the counter moved past it is harmless: a cache that has caught up past its
        ``before`` by then (dropping what the ring says it wrote) discards it."""
        with self._done_lock:
            if len(self._done) >= MAX_DONE:
                self._done.clear()  # nobody reads: the chain breaks, the cache drops all
            self._done.append(span)

    def committing(self, value: int) -> bool:
        """Whether the commit that made the counter ``value`` (odd) is still under way, as
        opposed to having died under way. A live commit holds the lock from before it turns
        the counter odd until after it turns it even, so: the lock is held, and the counter
        still reads ``value`` once that is known. (Held by a commit that took it after one
        died, not yet moved on: neither one's writes are acknowledged either.) Rarely, the
        lock is free and is taken shared for the time of two system calls."""
        try:
            fcntl.flock(self._probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return self.read() == value
        fcntl.flock(self._probe, fcntl.LOCK_UN)
        return False

    def finished(self) -> list[Span]:
        """Take this process's finished commits recorded so far, oldest first."""
        with self._done_lock:
            done, self._done = self._done, []
        return done

    def close(self) -> None:
        self._value.release()
        self._map.close()
        os.close(self._fd)
        os.close(self._probe)


class SqliteRecordCache:
    """Records by key, served while the change counter stays at the value they were read under,
    or moves only by commits whose keys are known (this process's own, the ring's)."""

    def __init__(self, counter: ChangeCounter, max_entries: int = MAX_ENTRIES, ttl: float = TTL_S):
        self._counter = counter
        self._max = max_entries
        self._ttl = ttl
        self._entries: dict[Key, Record | Absent] = {}
        #: Each entry's key by its ``sqlite_ring.key_hash``, to drop what other processes wrote.
        self._hashes: dict[int, Key] = {}
        #: This process's finished commits not caught up with yet, by ``before``.
        self._own: dict[int, Span] = {}
        self._seen = -1
        self._expires = 0.0
        #: The last look found another process's commit under way (or died under way): what
        #: is read now is not kept.
        self._passing = False

    def get(self, key: Key) -> Record | Absent | None:
        """The cached record (:data:`ABSENT`: known not to be stored), or ``None``: then read
        SQLite and :meth:`put` (:meth:`put_absent`) what it returned before anything else
        runs. A commit that began after this look changes the counter, so the record is dropped
        at the next look even if it is older than that commit.

        Moves of the counter that keep the cache (:meth:`_catch_up`):

        - commits whose writes are known, taken in order from the value the cache knows: this
          process's own (:meth:`ChangeCounter.finished`) set the records they wrote; other
          processes' (``sqlite_ring.py``) drop the keys they wrote. Each commit held the lock
          from ``before`` to ``after``, so nothing else wrote in between; a read that looked
          before and put a written key (old or new) is done by now (get, read and put run with
          no await between them), and the key is set or dropped here;
        - this process's own commit in progress (the counter is ``before + 1`` and
          ``ChangeCounter.own`` says so): the entries are those of ``before``, which is all a
          read may promise, since none of that commit's writes is acknowledged yet."""
        seen = self._counter.read()
        self._passing = False
        target = seen
        if seen != self._seen:
            if seen % 2:
                own = self._counter.own
                if own is not None and seen == own.before + 1:
                    target = own.before
                else:
                    # Another process's commit: nothing read now is kept (its writes may be
                    # in SQLite or not), and the entries stay for when it has finished.
                    self._passing = True
                    if not self._counter.committing(seen):
                        return None  # it died under way: read SQLite until the next commit
                    target = seen - 1  # under way: as before it, none of its writes acknowledged
            if not self._catch_up(target):
                self._drop_all(seen)
                return None
        if time.monotonic() >= self._expires:
            self._drop_all(target)
            return None
        return self._entries.get(key)

    def _drop_all(self, seen: int) -> None:
        self._entries.clear()
        self._hashes.clear()
        self._seen = seen
        self._expires = time.monotonic() + self._ttl

    def _catch_up(self, target: int) -> bool:
        """Apply the commits from the value the cache knows to ``target``; ``False`` (drop
        everything) when one of them is not known."""
        for span in self._counter.finished():
            self._own[span.before] = span
        start = self._seen
        if start % 2 or target < start or target - start >= 2 * sqlite_ring.RING:
            return False
        for before in range(start, target, 2):
            mine = self._own.pop(before) if before in self._own else None
            if mine is not None and mine.written is not None:
                for key, record in mine.written.items():
                    self._set(key, record)
                continue
            hashes = self._counter.ring.keys_of(before)
            if hashes is None:
                return False
            for value in hashes:
                written = self._hashes.pop(value, None)
                if written is not None:
                    self._entries.pop(written, None)
        # The slots read were not reused meanwhile only if the counter is not a ring further.
        if self._counter.read() - start >= 2 * sqlite_ring.RING:
            return False
        for before in [b for b in self._own if b < target]:
            del self._own[before]
        self._seen = target
        return True

    def _set(self, key: Key, record: Record | None) -> None:
        if record is None or len(self._entries) >= self._max:
            self._entries.pop(key, None)
        else:
            self._keep(key, record)

    def _keep(self, key: Key, record: Record | Absent) -> None:
        value = sqlite_ring.key_hash(key)
        other = self._hashes.get(value)
        if other is not None and other != key:
            self._entries.pop(other, None)  # a collision: one key per hash, or a drop could miss
        self._entries[key] = record
        self._hashes[value] = key

    def put(self, record: Record) -> None:
        self._remember(record.key, record)

    def put_absent(self, key: Key) -> None:
        """``key`` was read and is not stored (under the same rules as :meth:`put`)."""
        self._remember(key, ABSENT)

    def _remember(self, key: Key, record: Record | Absent) -> None:
        if self._seen % 2 or self._passing:
            return  # a commit is under way, or died under way: nothing read now is kept
        if len(self._entries) >= self._max:
            self._entries.clear()
            self._hashes.clear()
        self._keep(key, record)
