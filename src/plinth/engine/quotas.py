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

An engine extension (``extensions.py``): the quota list it enforces is given when it is
registered; each quota names its container kind, and the counter's fields are the quota
kind's (``kinds/quota.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from plinth.engine.address import Address
from plinth.engine.extensions import Extension, ExtensionFactory, ExtensionStore, WriteChange
from plinth.engine.render import SERVER_ACTOR, event_doc, finish_item
from plinth.errors import TooManyRequests
from plinth.kinds.base import KindSpec
from plinth.kinds.quota import (
    CEILING_FIELD,
    COUNTER_FIELD,
    QUOTAS,
    QuotaDefinition,
    exceeded_message,
    quota_fields,
    quota_id,
)
from plinth.storage.base import AppendEvent, Delete, Key, Operation, Put, Record, StorageError, Tally
from plinth.storage.query import ListRequest

QUOTA_KIND = "quota"
COUNT_PAGE = 500


def quotas_extension(quotas: Sequence[QuotaDefinition] = QUOTAS) -> ExtensionFactory:
    """The factory that registers :class:`Quotas` enforcing ``quotas``."""
    return lambda host: Quotas(host.records, host.kinds, quotas)


class Quotas(Extension):
    """The quota operations of the engine's writes (a no-op when the quota kind is not served)."""

    def __init__(
        self, records: ExtensionStore, kinds: Mapping[str, KindSpec], quotas: Sequence[QuotaDefinition] = QUOTAS
    ) -> None:
        self.records = records
        self.kind = kinds.get(QUOTA_KIND)
        self.quotas = tuple(quotas)
        self.limiting = {q.counts: q for q in self.quotas}

    def _key(self, quota: QuotaDefinition, org: str, holder: str | None) -> Key:
        return Key(org, QUOTA_KIND, "", quota_id(org, quota, holder if quota.container else None))

    def _tally(self, quota: QuotaDefinition, org: str, holder: str | None, delta: int) -> Tally:
        return Tally(self._key(quota, org, holder), delta, COUNTER_FIELD, CEILING_FIELD)

    def _limiting(self, kind: KindSpec) -> QuotaDefinition | None:
        return self.limiting.get(kind.name) if self.kind is not None else None

    def _held_by(self, kind: KindSpec) -> list[QuotaDefinition]:
        """The quotas each item of ``kind`` holds (its GVC's own)."""
        return [q for q in self.quotas if q.container == kind.name] if self.kind is not None else []

    def seed_basis(self) -> Any:
        """What :meth:`seed` creates depends on: the quota list (a new one must be seeded)."""
        return [[q.name, q.counts, q.container] for q in self.quotas] if self.kind is not None else []

    async def seed(self, org: str, now: str) -> int:
        return await self.ensure(org, now)

    async def before_commit(self, change: WriteChange) -> list[Operation]:
        """A create adds its container's own quotas and a tally of +1 on the quota that limits
        its kind (last: see :class:`Tally`); a delete removes its container's quotas (it holds
        no items by then) and counts one item fewer. An update adds nothing."""
        if change.created:
            return self.on_create(change.kind, change.org, change.gvc, change.name, change.now)
        if change.deleted:
            return await self.on_delete(change.kind, change.org, change.gvc, change.name)
        return []

    async def dry_run(self, change: WriteChange) -> None:
        if change.created:
            await self.check_room(change.kind, change.org, change.gvc)

    async def refused(self, change: WriteChange, error: StorageError) -> Exception | None:
        if error.code != "limit" or self._limiting(change.kind) is None:
            return None
        return await self.exceeded(change.kind, change.org, change.gvc)

    def on_create(self, kind: KindSpec, org: str, gvc: str | None, name: str, now: str) -> list[Operation]:
        """What a create of ``kind`` adds to its transaction (see :meth:`before_commit`)."""
        ops: list[Operation] = []
        for quota in self._held_by(kind):
            ops += self._new_record(quota, org, name, 0, now)
        limiting = self._limiting(kind)
        if limiting is not None:
            ops.append(self._tally(limiting, org, gvc, 1))
        return ops

    async def on_delete(self, kind: KindSpec, org: str, gvc: str | None, name: str) -> list[Operation]:
        """What a delete of ``kind`` adds to its transaction (see :meth:`before_commit`)."""
        ops: list[Operation] = []
        for quota in self._held_by(kind):
            record = await self.records.get(self._key(quota, org, name), fresh=True)
            if record is not None:
                ops.append(Delete(record.key, record.version))
        limiting = self._limiting(kind)
        if limiting is not None:
            ops.append(self._tally(limiting, org, gvc, -1))
        return ops

    async def check_room(self, kind: KindSpec, org: str, gvc: str | None) -> None:
        """For a dry run, which commits no tally: 429 when the quota has no unit left now."""
        limiting = self._limiting(kind)
        if limiting is None:
            return
        record = await self.records.get(self._key(limiting, org, gvc), fresh=True)
        if record is not None:
            doc = orjson.loads(record.doc)
            if doc[COUNTER_FIELD] >= doc[CEILING_FIELD]:
                raise TooManyRequests(exceeded_message(limiting, gvc, doc[CEILING_FIELD]), {"quota": limiting.name})

    async def exceeded(self, kind: KindSpec, org: str, gvc: str | None) -> TooManyRequests:
        """The 429 for a write the store refused at the quota's limit."""
        limiting = self.limiting[kind.name]
        record = await self.records.get(self._key(limiting, org, gvc), fresh=True)
        max_items = orjson.loads(record.doc)[CEILING_FIELD] if record is not None else None
        return TooManyRequests(exceeded_message(limiting, gvc, max_items), {"quota": limiting.name})

    def _new_record(
        self, quota: QuotaDefinition, org: str, holder: str | None, current: int, now: str
    ) -> list[Operation]:
        assert self.kind is not None
        key = self._key(quota, org, holder)
        candidate = {"kind": QUOTA_KIND, **quota_fields(quota, holder, current)}
        item = finish_item(
            self.kind, candidate, org=org, gvc=None, item_id=key.name, version=1, created=now, modified=now, status={}
        )
        href = Address(self.kind, org, None, key.name).href
        event_id, event = event_doc("created", href, 1, SERVER_ACTOR, now)
        return [Put(Record(key, key.name, 1, orjson.dumps(item)), None), AppendEvent(key, event_id, now, event)]

    async def ensure(self, org: str, now: str) -> int:
        """Seed the quotas ``org`` lacks (an org or containers an older server created, a quota
        added to the list), each with the items it limits counted. Returns how many it created;
        idempotent."""
        if self.kind is None:
            return 0
        created = 0
        holders: dict[str, list[str]] = {}
        for quota in self.quotas:
            if quota.container is not None and quota.container not in holders:
                request = ListRequest(org, quota.container, "", COUNT_PAGE)
                holders[quota.container] = [r.key.name for r in await self.records.every(request)]
            for holder in holders[quota.container] if quota.container is not None else [None]:
                if await self.records.get(self._key(quota, org, holder), fresh=True) is not None:
                    continue
                counted = await self.records.every(ListRequest(org, quota.counts, holder or "", COUNT_PAGE))
                try:
                    await self.records.commit(self._new_record(quota, org, holder, len(counted), now))
                except StorageError as exc:
                    if exc.code != "exists":  # else another replica seeded it meanwhile
                        raise
                    continue
                created += 1
        return created
