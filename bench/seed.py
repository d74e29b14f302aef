"""Bulk load through the engine, in process: the records are exactly what the server writes.

``Engine.create`` runs the full write pipeline (decode, defaults, validation, references,
status, event); only its commit is redirected into a buffer that is written in large
transactions, because one durable commit per item (an fsync each on SQLite) would make
100,000 items take many minutes. The server must not be running meanwhile: a server that
caches records would not see rows written behind its back.

A loaded machine may keep a batch past the store's bound on one operation (``QUERY_TIMEOUT``
on PostgreSQL: "the database did not answer within 5 s"). The seed then carries on instead of
failing the bench (:class:`BufferedCommits`, :func:`patiently`): a batch that failed is judged
item by item on what the store holds (a transaction that timed out may still have committed),
what is missing is committed again in smaller batches, and the batch size stays smaller.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from bench.items import ItemKind
from bench.stores import Store
from plinth.engine.access import Unrestricted
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.errors import ServiceUnavailable
from plinth.kinds import REGISTRY
from plinth.kinds.quota import MAX_LIMIT
from plinth.storage import open_storage
from plinth.storage.base import Key, Operation, Put, Record, Storage, StorageError
from plinth.storage.query import ListRequest

#: Items per seeding transaction at first: small enough for the store's 5 s bound on one
#: operation on a quiet machine (a batch that times out is split; see the module docstring).
BATCH_ITEMS = 250
#: How long the seed keeps trying while the store does not answer, before it gives up.
PATIENCE_S = 120.0
#: The first pause after a failed attempt; it doubles, up to :data:`MAX_PAUSE_S`.
FIRST_PAUSE_S = 0.25
MAX_PAUSE_S = 4.0

T = TypeVar("T")
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
        #: One list of operations per queued commit (one created item each).
        self._queued: list[list[Operation]] = []
        self._read: dict[Key, Record | None] = {}
        #: Items per transaction; halved while batches time out.
        self.batch_items = BATCH_ITEMS

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
        return len(self._queued)

    async def commit(self, ops: Sequence[Operation]) -> None:
        self._queued.append(list(ops))

    async def flush(self) -> None:
        """Write every queued item, :attr:`batch_items` to a transaction; an item is written
        once even when a transaction that failed had committed after all."""
        # Swapped before the await: other stripes keep queueing into a fresh buffer meanwhile.
        pending, self._queued = self._queued, []
        deadline = time.monotonic() + PATIENCE_S
        pause = FIRST_PAUSE_S
        while pending:
            batch = pending[: self.batch_items]
            try:
                await self._storage.commit([op for item in batch for op in item])
            except StorageError as exc:
                # "exists": an earlier attempt of this batch committed late (it had timed out).
                if exc.code not in ("unavailable", "exists") or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(pause)
                pause = min(pause * 2, MAX_PAUSE_S)
                if exc.code == "unavailable":
                    self.batch_items = max(1, self.batch_items // 2)
                stored = await patiently(lambda batch=batch: self._stored(batch), deadline)  # type: ignore[misc]
                pending = [item for n, item in enumerate(pending) if n >= len(batch) or not stored[n]]
                continue
            pending = pending[len(batch) :]

    async def _stored(self, batch: list[list[Operation]]) -> list[bool]:
        """Whether each item of ``batch`` is stored as queued (its record's id)."""
        found: list[bool] = []
        for ops in batch:
            created = next(op.record for op in ops if isinstance(op, Put) and op.expected_version is None)
            record = await self._storage.get(created.key, fresh=True)
            found.append(record is not None and record.id == created.id)
        return found


async def patiently(attempt: Callable[[], Awaitable[T]], deadline: float) -> T:
    """``attempt()``, tried again after a pause while the store does not answer (a storage
    error ``unavailable``, or the engine's 503), until ``deadline`` (``time.monotonic``)."""
    pause = FIRST_PAUSE_S
    while True:
        try:
            return await attempt()
        except (StorageError, ServiceUnavailable) as exc:
            if (isinstance(exc, StorageError) and exc.code != "unavailable") or time.monotonic() > deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, MAX_PAUSE_S)


async def _seed(store: Store, org: str, kind: ItemKind, start: int, stop: int) -> None:
    storage = await open_storage(store.database_url, store.data_dir)
    try:
        stored = await storage.list_page(ListRequest(org, kind.name, "", stop + 1))
        buffered = BufferedCommits(storage, kind.name, {r.key.name for r in stored})
        engine = Engine(buffered, REGISTRY)
        info = RequestInfo(kind=kind.name, org=org)
        # The bootstrap admin is a server admin: the engine checks it as Unrestricted.
        access = Unrestricted(ACTOR_TEMPLATE.format(org=org))
        await _lift_quotas(Engine(storage, REGISTRY), org)

        async def stripe(first: int) -> None:
            # On PostgreSQL each create awaits a few reads: several stripes keep the pool busy.
            for index in range(first, stop, STRIPES):
                body = kind.body(index)
                # Only reads can fail here (the commit is queued): trying again is safe.
                await patiently(lambda body=body: engine.create(info, body, access), time.monotonic() + PATIENCE_S)  # type: ignore[misc]
                if buffered.queued_items >= buffered.batch_items:
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
    deadline = time.monotonic() + PATIENCE_S
    quotas = await patiently(lambda: engine.storage.list_page(ListRequest(org, "quota", "", 1000)), deadline)
    for record in quotas:
        info = RequestInfo(kind="quota", org=org, name=record.key.name)
        # The same value again is no change: trying again after a commit that timed out is safe.
        await patiently(lambda info=info: engine.patch(info, {"max": MAX_LIMIT}), deadline)  # type: ignore[misc]


def seed(store: Store, org: str, kind: ItemKind, start: int, stop: int) -> float:
    """Create items ``start`` .. ``stop - 1``; returns the seconds it took."""
    began = time.monotonic()
    if stop > start:
        asyncio.run(_seed(store, org, kind, start, stop))
    return time.monotonic() - began
