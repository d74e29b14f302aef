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
from plinth.engine.access import Unrestricted
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.kinds import REGISTRY
from plinth.kinds.quota import MAX_LIMIT
from plinth.storage import open_storage
from plinth.storage.base import Key, Operation, Record, Storage
from plinth.storage.query import ListRequest

#: Items per seeding transaction: small enough for the store's 5 s bound on one operation under load.
BATCH_ITEMS = 250
STRIPES = 8
#: The bootstrap admin's link: the actor recorded in the seeded items' events.
ACTOR_TEMPLATE = "/org/{org}/serviceaccount/admin"


class BufferedCommits:
    """A storage whose ``commit`` queues the operations; :meth:`flush` writes them at once.

    Reads go to the real store. Safe for the seed only: every item has a fresh name, so no
    read depends on a queued write. Reads of other kinds' records (the org, the GVC, link
    targets: the same few for every item, and unchanged while seeding) are remembered, which
    saves two round trips an item on PostgreSQL.
    """

    def __init__(self, storage: Storage, seeded_kind: str, stored_names: set[str]) -> None:
        self._storage = storage
        self._seeded_kind = seeded_kind
        self._stored_names = stored_names
        self._queued: list[Operation] = []
        self._commits = 0
        self._read: dict[Key, Record | None] = {}

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None:
        if key.kind == self._seeded_kind:
            # The engine's "does the name exist" read, answered from one listing made before
            # the seed (a round trip an item saved); names stored before still read through.
            return await self._storage.get(key) if key.name in self._stored_names else None
        if key not in self._read:
            self._read[key] = await self._storage.get(key)
        return self._read[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)

    @property
    def queued_items(self) -> int:
        """Commits queued (one per created item)."""
        return self._commits

    async def commit(self, ops: Sequence[Operation]) -> None:
        self._queued.extend(ops)
        self._commits += 1

    async def flush(self) -> None:
        # Swapped before the await: other stripes keep queueing into a fresh buffer meanwhile.
        if self._queued:
            ops, self._queued, self._commits = self._queued, [], 0
            await self._storage.commit(ops)


async def _seed(store: Store, org: str, kind: ItemKind, start: int, stop: int) -> None:
    storage = await open_storage(store.database_url, store.data_dir)
    try:
        stored = await storage.list_page(ListRequest(org, kind.name, "", stop + 1))
        buffered = BufferedCommits(storage, kind.name, {r.key.name for r in stored})
        engine = Engine(buffered, REGISTRY)  # type: ignore[arg-type]
        info = RequestInfo(kind=kind.name, org=org)
        # The bootstrap admin is a server admin: the engine checks it as Unrestricted.
        access = Unrestricted(ACTOR_TEMPLATE.format(org=org))
        await _lift_quotas(Engine(storage, REGISTRY), org)

        async def stripe(first: int) -> None:
            # On PostgreSQL each create awaits a few reads: several stripes keep the pool busy.
            for index in range(first, stop, STRIPES):
                await engine.create(info, kind.body(index), access)
                if buffered.queued_items >= BATCH_ITEMS:
                    await buffered.flush()

        # A TaskGroup: one failing stripe cancels the others instead of leaving them running.
        async with asyncio.TaskGroup() as group:
            for n in range(STRIPES):
                group.create_task(stripe(start + n))
        await buffered.flush()
    finally:
        await storage.close()


async def _lift_quotas(engine: Engine, org: str) -> None:
    """Every quota of ``org`` at the highest ``max``: the seed creates more items than the
    default quotas allow."""
    for record in await engine.storage.list_page(ListRequest(org, "quota", "", 1000)):
        await engine.patch(RequestInfo(kind="quota", org=org, name=record.key.name), {"max": MAX_LIMIT})


def seed(store: Store, org: str, kind: ItemKind, start: int, stop: int) -> float:
    """Create items ``start`` .. ``stop - 1``; returns the seconds it took."""
    began = time.monotonic()
    if stop > start:
        asyncio.run(_seed(store, org, kind, start, stop))
    return time.monotonic() - began
