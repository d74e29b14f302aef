"""Quotas, enforced where the count cannot drift: in the transaction of the write.

Every create of a kind a quota limits (``kinds/quota.py``'s :data:`~plinth.kinds.quota.QUOTAS`)
carries a :class:`~plinth.storage.base.Tally` of +1 on its quota record, and every delete one of
-1. The store applies it on the stored counter and refuses the whole write when it would pass
``max`` (``StorageError("limit")``, which becomes a 429 naming the quota), and serialises the
tallies of one quota, so concurrent creates can never both take the last unit. A tally does not
change the quota's version: counting never makes a PATCH of ``max`` conflict.

Per-GVC quotas live and die with their GVC: created in the GVC's create transaction, deleted in
its delete's. Org-wide ones are seeded with the org's built-ins; quotas an older server did not
keep are seeded, with the items counted, by :meth:`Quotas.ensure` at start.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from plinth.engine.render import event_doc, finish_item, href_of
from plinth.errors import TooManyRequests
from plinth.kinds.base import KindSpec
from plinth.kinds.quota import LIMITING, QUOTAS, QuotaDefinition, exceeded_message, quota_fields, quota_id
from plinth.storage.base import AppendEvent, Delete, Key, Operation, Put, Record, Storage, StorageError, Tally
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

QUOTA_KIND = "quota"
#: Who the server's own quota records are created by (the engine's ``SYSTEM`` principal).
SERVER_ACTOR = "/plinth/system"
#: The kind whose items hold per-GVC quotas.
CONTAINER_KIND = "gvc"
COUNT_PAGE = 500


class Quotas:
    """The quota operations of the engine's writes (a no-op when the quota kind is not served)."""

    def __init__(self, storage: Storage, kinds: Mapping[str, KindSpec]) -> None:
        self.storage = storage
        self.kind = kinds.get(QUOTA_KIND)

    def _key(self, quota: QuotaDefinition, org: str, gvc: str | None) -> Key:
        return Key(org, QUOTA_KIND, "", quota_id(org, quota, gvc if quota.per_gvc else None))

    def _limiting(self, kind: KindSpec) -> QuotaDefinition | None:
        return LIMITING.get(kind.name) if self.kind is not None else None

    def on_create(self, kind: KindSpec, org: str, gvc: str | None, name: str, now: str) -> list[Operation]:
        """What a create of ``kind`` adds to its transaction: a GVC's own quotas, and a tally of
        +1 on the quota that limits ``kind`` (put it last: see :class:`Tally`)."""
        ops: list[Operation] = []
        if self.kind is not None and kind.name == CONTAINER_KIND:
            for quota in QUOTAS:
                if quota.per_gvc:
                    ops += self._new_record(quota, org, name, 0, now)
        limiting = self._limiting(kind)
        if limiting is not None:
            ops.append(Tally(self._key(limiting, org, gvc), 1))
        return ops

    async def on_delete(self, kind: KindSpec, org: str, gvc: str | None, name: str) -> list[Operation]:
        """What a delete of ``kind`` adds to its transaction: the GVC's own quotas go with it
        (it holds no items by then), and the limiting quota counts one item fewer."""
        ops: list[Operation] = []
        if self.kind is not None and kind.name == CONTAINER_KIND:
            for quota in QUOTAS:
                if quota.per_gvc:
                    record = await self.storage.get(self._key(quota, org, name), fresh=True)
                    if record is not None:
                        ops.append(Delete(record.key, record.version))
        limiting = self._limiting(kind)
        if limiting is not None:
            ops.append(Tally(self._key(limiting, org, gvc), -1))
        return ops

    async def check_room(self, kind: KindSpec, org: str, gvc: str | None) -> None:
        """For a dry run, which commits no tally: 429 when the quota has no unit left now."""
        limiting = self._limiting(kind)
        if limiting is None:
            return
        record = await self.storage.get(self._key(limiting, org, gvc), fresh=True)
        if record is not None:
            doc = orjson.loads(record.doc)
            if doc["current"] >= doc["max"]:
                raise TooManyRequests(exceeded_message(limiting, gvc, doc["max"]), {"quota": limiting.name})

    async def exceeded(self, kind: KindSpec, org: str, gvc: str | None) -> TooManyRequests:
        """The 429 for a write the store refused at the quota's limit."""
        limiting = LIMITING[kind.name]
        record = await self.storage.get(self._key(limiting, org, gvc), fresh=True)
        max_items = orjson.loads(record.doc)["max"] if record is not None else None
        return TooManyRequests(exceeded_message(limiting, gvc, max_items), {"quota": limiting.name})

    def _new_record(self, quota: QuotaDefinition, org: str, gvc: str | None, current: int, now: str) -> list[Operation]:
        assert self.kind is not None
        key = self._key(quota, org, gvc)
        candidate = {"kind": QUOTA_KIND, **quota_fields(quota, gvc, current)}
        item = finish_item(
            self.kind, candidate, org=org, gvc=None, item_id=key.name, version=1, created=now, modified=now, status={}
        )
        href = href_of(self.kind, org, None, key.name)
        event_id, event = event_doc("created", href, 1, SERVER_ACTOR, now)
        return [Put(Record(key, key.name, 1, orjson.dumps(item)), None), AppendEvent(key, event_id, now, event)]

    async def ensure(self, org: str, now: str) -> int:
        """Seed the quotas ``org`` lacks (an org or GVCs an older server created), each with the
        items it limits counted. Returns how many it created; idempotent."""
        if self.kind is None:
            return 0
        created = 0
        gvcs = [r.key.name for r in await every_record(self.storage, ListRequest(org, CONTAINER_KIND, "", COUNT_PAGE))]
        for quota in QUOTAS:
            for gvc in gvcs if quota.per_gvc else [None]:
                if await self.storage.get(self._key(quota, org, gvc), fresh=True) is not None:
                    continue
                counted = await every_record(self.storage, ListRequest(org, quota.counts, gvc or "", COUNT_PAGE))
                try:
                    await self.storage.commit(self._new_record(quota, org, gvc, len(counted), now))
                except StorageError as exc:
                    if exc.code != "exists":  # else another replica seeded it meanwhile
                        raise
                    continue
                created += 1
        return created
