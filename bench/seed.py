"""Bulk load through the engine, in process: the records are exactly what the server writes.

``Engine.create`` runs the full write pipeline (decode, defaults, validation, references,
status, event); only its commit is redirected into a buffer that is written in large
transactions, because one durable commit per item (an fsync each on SQLite) would make
100,000 items take many minutes. The server must not be running meanwhile: a server that
caches records would not see rows written behind its back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from bench.items import ItemKind
from bench.stores import Store
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.kinds import REGISTRY
from plinth.storage import open_storage
from plinth.storage.base import Operation, Storage

BATCH_ITEMS = 2000
#: The bootstrap admin's link: the actor recorded in the seeded items' events.
ACTOR_TEMPLATE = "/org/{org}/serviceaccount/admin"


class BufferedCommits:
    """A storage whose ``commit`` queues the operations; :meth:`flush` writes them at once.

    Reads go to the real store. Safe for the seed only: every item has a fresh name, so no
    read depends on a queued write.
    """

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._queued: list[Operation] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)

    async def commit(self, ops: Sequence[Operation]) -> None:
        self._queued.extend(ops)

    async def flush(self) -> None:
        if self._queued:
            ops, self._queued = self._queued, []
            await self._storage.commit(ops)


async def _seed(store: Store, org: str, kind: ItemKind, start: int, stop: int) -> None:
    storage = await open_storage(store.database_url, store.data_dir)
    try:
        buffered = BufferedCommits(storage)
        engine = Engine(buffered, REGISTRY)  # type: ignore[arg-type]
        info = RequestInfo(kind=kind.name, org=org)
        actor = ACTOR_TEMPLATE.format(org=org)
        for index in range(start, stop):
            await engine.create(info, kind.body(index), actor)
            if (index - start + 1) % BATCH_ITEMS == 0:
                await buffered.flush()
        await buffered.flush()
    finally:
        await storage.close()


def seed(store: Store, org: str, kind: ItemKind, start: int, stop: int) -> float:
    """Create items ``start`` .. ``stop - 1``; returns the seconds it took."""
    began = time.monotonic()
    if stop > start:
        asyncio.run(_seed(store, org, kind, start, stop))
    return time.monotonic() - began
