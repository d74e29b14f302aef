"""A per-process cache of records read from PostgreSQL, kept coherent across replicas.

Every commit names the keys it wrote in a ``NOTIFY`` sent inside its own transaction, so the
notification is delivered exactly when the write becomes visible; every replica (this one too)
evicts those keys when it arrives. The writing process also evicts them itself at once (its
next read sees its own write), and a key whose compare-and-swap failed is evicted, so the retry
re-reads the database. When the listening connection is lost, the whole cache is dropped.
Entries also expire after :data:`TTL_S`: a bound on staleness should a notification ever be lost.

Writes never trust the cache: compare-and-swap on ``version`` in the database decides, so a
stale read can cause a retry or a 409, never a lost update.
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


class RecordCache:
    def __init__(self, ttl: float = TTL_S, max_entries: int = MAX_ENTRIES):
        self._ttl = ttl
        self._max = max_entries
        self._entries: OrderedDict[Key, tuple[Record, float]] = OrderedDict()

    def get(self, key: Key) -> Record | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        record, stored = entry
        if time.monotonic() - stored > self._ttl:
            del self._entries[key]
            return None
        return record

    def put(self, record: Record) -> None:
        self._entries[record.key] = (record, time.monotonic())
        if len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def evict(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self._entries.pop(key, None)

    def clear(self) -> None:
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
