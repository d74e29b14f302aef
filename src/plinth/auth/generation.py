"""The access generation: one value in the store that changes with every write that can change
who may do what (keys, users, groups, policies). Each process polls it at most every
``interval`` seconds and drops its key and decision caches when it moves, so a revoked key or a
changed policy holds on every replica (SQLite workers and PostgreSQL replicas alike) within a
second, without trusting a notification to arrive.
"""

from __future__ import annotations

import time

from plinth.storage.base import SetMeta, Storage

GENERATION_META = "access.generation"
POLL_INTERVAL_S = 0.5


def bump() -> SetMeta:
    """The operation a write appends, in its own transaction, to move the generation."""
    import uuid

    return SetMeta(GENERATION_META, uuid.uuid4().hex)


class GenerationWatcher:
    def __init__(self, storage: Storage, interval: float = POLL_INTERVAL_S):
        self._storage = storage
        self._interval = interval
        self._value: str | None = None
        self._checked = -1e9

    async def current(self) -> str | None:
        """The generation, read from the store when the last read is older than ``interval``."""
        now = time.monotonic()
        if now - self._checked >= self._interval:
            self._value = await self._storage.get_meta(GENERATION_META)
            self._checked = now
        return self._value

    def expire(self) -> None:
        """Force the next :meth:`current` to read the store (after this process wrote)."""
        self._checked = -1e9
