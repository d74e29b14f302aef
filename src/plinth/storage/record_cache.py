"""A per-process cache of records read from PostgreSQL, kept coherent across replicas.

Every commit names the keys it wrote in a ``NOTIFY`` sent inside its own transaction, so the
notification is delivered exactly when the write becomes visible; every replica (this one too)
evicts those keys when it arrives. The writing process also evicts them itself at once (its
next read sees its own write), and a key whose compare-and-swap failed is evicted, so the retry
re-reads the database. When the listening connection is lost, the whole cache is dropped.
Entries also expire after :data:`TTL_S`: a bound on staleness should a notification ever be lost.

Writes never trust the cache: compare-and-swap on ``version`` in the database decides, so a
stale read can cause a retry or a 409, never a lost update.

A key read and found missing is cached too (:data:`ABSENT`), and evicted like a record; so a
link to an item not created yet (a domain's route to a future workload) costs no round trip
per write. An answer from the database, a record or "missing", is kept only if nothing evicted
the key (or everything) while the read was under way (:meth:`RecordCache.ticket`): a write
whose notification arrived between the read's SELECT and its answer would otherwise be hidden
until the TTL (an older version served by this replica, or a created item refused as a link).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable

import orjson

from plinth.storage.base import Delete, Key, Operation, Put, Record, Tally

CHANNEL = "plinth_records"
TTL_S = 2.0
#: About 10-20 MB of records the size of a domain: keeps a worker well under 150 MB RSS
#: however many items clients read.
MAX_ENTRIES = 10_000
#: PostgreSQL refuses NOTIFY payloads of 8000 bytes or more: past this, invalidate everything.
MAX_PAYLOAD = 7000
EVERYTHING = "*"
#: Eviction counters a read of a missing key is checked against: one per bucket of keys.
BUCKETS = 1024


class Absent:
    """What the cache holds for a key read and found not stored (:data:`ABSENT`)."""

    __slots__ = ()


ABSENT = Absent()


class RecordCache:
    def __init__(self, ttl: float = TTL_S, max_entries: int = MAX_ENTRIES):
        self._ttl = ttl
        self._max = max_entries
        self._entries: OrderedDict[Key, tuple[Record | Absent, float]] = OrderedDict()
        #: Moved by every eviction of a key in the bucket, and by every clear (``_cleared``).
        self._evictions = [0] * BUCKETS
        self._cleared = 0

    def ticket(self, key: Key) -> tuple[int, int]:
        """Taken before reading ``key``; :meth:`put` and :meth:`put_absent` check it is still
        current."""
        return self._cleared, self._evictions[hash(key) % BUCKETS]

    def put(self, record: Record, ticket: tuple[int, int]) -> None:
        """``record`` was read: kept unless its key, or everything, was evicted since ``ticket``
        was taken (a commit or notification may have overtaken the read)."""
        if ticket == self.ticket(record.key):
            self._remember(record.key, record)

    def put_absent(self, key: Key, ticket: tuple[int, int]) -> None:
        """``key`` was read and is not stored: kept on the same terms as :meth:`put`."""
        if ticket == self.ticket(key):
            self._remember(key, ABSENT)

    def get(self, key: Key) -> Record | Absent | None:
        """The cached record (:data:`ABSENT`: known missing), or ``None``: not known."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        record, stored = entry
        if time.monotonic() - stored > self._ttl:
            del self._entries[key]
            return None
        return record

    def _remember(self, key: Key, entry: Record | Absent) -> None:
        self._entries[key] = (entry, time.monotonic())
        if len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def evict(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self._evictions[hash(key) % BUCKETS] += 1
            self._entries.pop(key, None)

    def clear(self) -> None:
        self._cleared += 1
        self._entries.clear()

    def on_notification(self, payload: str | None) -> None:
        """The listener's callback: ``None`` (missed notifications) or ``*`` clear everything."""
        if payload is None or payload == EVERYTHING:
            self.clear()
            return
        try:
            self.evict(Key(*parts) for parts in orjson.loads(payload))
        except (ValueError, TypeError):
            self.clear()


def written_keys(ops: Iterable[Operation]) -> list[Key]:
    return [op.record.key if isinstance(op, Put) else op.key for op in ops if isinstance(op, Put | Delete | Tally)]


def payload_for(keys: list[Key]) -> str:
    """The NOTIFY payload naming ``keys`` (or ``*`` when they do not fit)."""
    text = orjson.dumps([[k.org, k.kind, k.parent, k.name] for k in keys]).decode()
    return text if len(text.encode()) < MAX_PAYLOAD else EVERYTHING
