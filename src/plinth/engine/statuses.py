"""Everything ``Status.compute`` may read, and the status refreshes that links between items cause.

A status is computed by the server before the commit of the write that changes it, and stored
by that write's transaction. What it reads beside the item itself is declared by the kind in
one list, ``Status.depends_on`` (``kinds/base.py``), read through ``dependencies.py``:

- ``ReadsLinked``: the items it links to (``references``), resolved into ``ctx.resolved``, and
  its parent; a change to one of them refreshes it (``references.refresh_dependants``);
- ``ReadsLinkers``: the items that link to it (a volume set lists the workloads that mount
  it), as ``ctx.referrers``; a write or delete of such an item refreshes the status of what it
  links to, and of what it linked to before (:meth:`StatusInputs.refresh_referenced`);
- ``ReadsRuntime``: what the runtime reports, as ``ctx.reported``; the runtime is told why
  the item cannot run yet (its ``blockers``, which may read ``ctx.grants``), and, for a
  runtime that ``observes``, what its controller last reported (``observed_records.py``);
- what the engine's extensions provide (``extensions.py``'s ``status_inputs``): for
  ``AsksGrants``, what the org's policies answer, as ``ctx.grants`` (``grants.py``; a policy
  write refreshes the statuses that may have asked); for ``ReadsPlacements``, where the GVCs
  it reads are placed, as ``ctx.placements`` (``placement.py``);
- ``ReadsSelected``: a write of an item a query may select (a location, by a GVC's
  ``locationQuery``) refreshes what depends on the items holding one
  (:meth:`StatusInputs.settle_selectors`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from plinth.engine.address import Address
from plinth.engine.dependencies import dependants_of, linkers, runtime
from plinth.engine.extensions import Extensions
from plinth.engine.observed_records import read_observed
from plinth.engine.placement import holds_query
from plinth.engine.references import check_references, refresh_dependants
from plinth.kinds.base import DEFAULT_ENDPOINT_FORMAT, Item, KindContext, KindSpec
from plinth.kinds.links import gvc_locations
from plinth.meta import parse_link
from plinth.runtime.base import Placement, Runtime
from plinth.storage.base import Key, Put, Storage, StorageError
from plinth.storage.query import ListRequest
from plinth.storage.scan import pages

#: Reads and rewrites of one target before ``settle`` leaves it to the next writer.
SETTLE_ROUNDS = 10
#: Items read per page when looking for the ones whose query may select a changed item.
SELECTORS_PAGE = 200
#: ``observed`` not given: read the stored observation (when the runtime observes).
STORED: Any = object()


@dataclass
class StatusInputs:
    """Builds the :class:`KindContext` that ``Status.compute`` gets, for any kind; the engine's
    extensions fill in what they provide (``status_inputs``: grants, placements)."""

    storage: Storage
    kinds: Mapping[str, KindSpec]
    runtime: Runtime
    base_domain: str
    endpoint_format: str = DEFAULT_ENDPOINT_FORMAT
    #: Set by the engine once its extensions are built (they settle statuses through this).
    extensions: Extensions = field(default_factory=lambda: Extensions(()))

    async def placement(self, kind: KindSpec, org: str, item: Item, gvc: Item, href: str) -> Placement:
        """What the runtime is told of the stored item at ``href`` (a workload) in ``gvc``."""
        _, resolved, _ = await check_references(self.storage, self.kinds, org, kind.rules.references(item, org), {})
        ctx = KindContext(org=org, now=str(item.get("lastModified", "")), gvc=gvc.get("name"), parent=gvc)
        ctx = await self.extensions.status_inputs(kind, item, replace(ctx, resolved=resolved))
        reads = runtime(kind)
        blocked = tuple(reads.blockers(item, ctx)) if reads is not None else ()
        observed = await self._observed(kind, org, gvc.get("name"), item)
        locations = gvc_locations(gvc, ctx.placements, org)
        return Placement(item, gvc, href, locations, self.base_domain, blocked, observed)

    async def _observed(self, kind: KindSpec, org: str, gvc: str | None, item: Item) -> Any:
        """What the runtime's controller last reported of the item (``None``: nothing, or the
        runtime does not observe)."""
        if not self.runtime.observes or not item.get("name"):
            return None
        _, doc = await read_observed(self.storage, Address(kind, org, gvc, item["name"]).key, fresh=True)
        return doc

    async def context(
        self,
        kind: KindSpec,
        ctx: KindContext,
        item: Item,
        href: str,
        pending: Mapping[str, bool] | None = None,
        observed: Any = STORED,
    ) -> KindContext:
        """``ctx`` with ``referrers`` and ``reported`` filled as ``kind`` declares.

        ``pending`` holds referrers whose write is in progress in this transaction: whether
        each links to the item once it commits (the store still holds the state before);
        ``observed``, an observation being stored in this transaction (``observations.py``)."""
        referrers: tuple[str, ...] = ()
        referring = linkers(kind)
        if referring:
            rows = await self.storage.referrers(ctx.org, href, sorted(referring))
            found = {Address.stored(self.kinds[r.key.kind], r.key).href for r in rows}
            for other, links in (pending or {}).items():
                (found.add if links else found.discard)(other)
            referrers = tuple(sorted(found))
        ctx = await self.extensions.status_inputs(kind, item, ctx)
        reported: dict[str, Any] | None = None
        reads = runtime(kind)
        if reads is not None and ctx.parent is not None:
            locations = gvc_locations(ctx.parent, ctx.placements, ctx.org)
            blocked = tuple(reads.blockers(item, ctx))
            if observed is STORED:
                observed = await self._observed(kind, ctx.org, ctx.parent.get("name"), item)
            placement = Placement(item, ctx.parent, href, locations, self.base_domain, blocked, observed)
            summary = self.runtime.summary(placement)
            reported = {"ready": summary.ready, "replicas": summary.replicas, "message": summary.message}
        return replace(
            ctx,
            referrers=referrers,
            reported=reported,
            base_domain=self.base_domain,
            endpoint_format=self.endpoint_format,
        )

    async def refresh_referenced(
        self, changed: KindSpec, org: str, href: str, before: set[str], after: set[str], now: str
    ) -> list[Put]:
        """Status-only rewrites of the items ``href`` links to (``after``) or linked to
        (``before``) whose status ``ReadsLinkers`` of ``changed``, for the write's own
        transaction (``href`` counts as linking to what is in ``after``)."""
        ops: list[Put] = []
        for target in sorted(before | after):
            op = await self._refreshed(changed, org, target, now, {href: target in after})
            if op is not None:
                ops.append(op)
        return ops

    async def settle(self, changed: KindSpec, org: str, targets: set[str], now: str) -> None:
        """After a commit, make the targets' statuses agree with the links now stored.

        Status rewrites keep the item's version, so two writers that refreshed the same target
        from what each read before committing can leave the one that committed second without
        the other's link. Every writer settles its targets after its commit, until a read finds
        the stored status right: the last writer to settle has read every committed link. The
        write is committed already, so a store that stops answering ends the settling quietly
        (the client must not retry a write that was made)."""
        try:
            for target in sorted(targets):
                for _ in range(SETTLE_ROUNDS):
                    op = await self._refreshed(changed, org, target, now, None)
                    if op is None:
                        break
                    await _committed([op], self.storage)  # then read again: it may have lost a race
        except StorageError as exc:
            # The write is committed; an unreachable store leaves the status to the next writer.
            if exc.code != "unavailable":
                raise

    async def settle_dependants(
        self,
        changed: KindSpec,
        org: str,
        href: str,
        name: str,
        item: Item | None,
        now: str,
        only: Callable[[KindSpec, Item], bool] | None = None,
    ) -> None:
        """After a commit, make the statuses that depend on ``href`` agree with what is stored
        (with ``only``: those of the dependants it accepts, ``references.refresh_dependants``).

        A dependant's status was refreshed in the write's transaction from what the write read
        before committing; a concurrent write of another item it depends on may have done the
        same from an older read (a domain routed to two workloads created at once). Status
        rewrites keep the version, so the later commit wins whatever it read: every writer
        checks its dependants again after its commit, until a read finds them right."""
        if not dependants_of(self.kinds, changed.name).linking:
            return
        try:
            for _ in range(SETTLE_ROUNDS):
                ops = await refresh_dependants(
                    self.storage, self.kinds, changed, org, href, name, item, now, self.context, only
                )
                if not ops:
                    return
                await _committed(ops, self.storage)  # then read again: it may have lost a race
        except StorageError as exc:
            # The write is committed; an unreachable store leaves the status to the next writer.
            if exc.code != "unavailable":
                raise

    async def settle_selectors(self, changed: KindSpec, org: str, now: str) -> None:
        """After a committed write or delete of an item of ``changed``: the statuses that depend
        on the items whose query may select it (``ReadsSelected``: a GVC's ``locationQuery``
        may now select a location more or one less), made right."""
        for holder, path in dependants_of(self.kinds, changed.name).selectors:
            kind = self.kinds.get(holder)
            if kind is None:
                continue
            try:
                request = ListRequest(org, kind.name, "", SELECTORS_PAGE, None, holds_query(path))
                async for page in pages(self.storage, request):
                    for record in page:
                        item = orjson.loads(record.doc)
                        href = Address.stored(kind, record.key).href
                        await self.settle_dependants(kind, org, href, record.key.name, item, now)
            except StorageError as exc:
                # The write is committed; an unreachable store leaves the statuses to later writes.
                if exc.code != "unavailable":
                    raise

    async def _refreshed(
        self, changed: KindSpec, org: str, target: str, now: str, pending: Mapping[str, bool] | None
    ) -> Put | None:
        link = parse_link(target, org)
        kind = self.kinds.get(link.kind) if link is not None else None
        if link is None or kind is None or changed.name not in linkers(kind):
            return None
        key = Address(kind, org, link.gvc, link.name).key
        return await self._recomputed(kind, org, key, target, now, pending)

    async def _recomputed(
        self,
        kind: KindSpec,
        org: str,
        key: Key,
        href: str,
        now: str,
        pending: Mapping[str, bool] | None,
        observed: Any = STORED,
    ) -> Put | None:
        """The status-only rewrite of the stored item at ``key``, or ``None`` when its stored
        status is what it should be now (or it is gone); ``observed`` as in :meth:`context`."""
        record = await self.storage.get(key, fresh=True)
        if record is None:
            return None
        item = orjson.loads(record.doc)
        parent = await self._parent(kind, org, item)
        _, resolved, hrefs = await check_references(self.storage, self.kinds, org, kind.rules.references(item, org), {})
        base = KindContext(org=org, now=now, gvc=item.get("gvc"), parent=parent, resolved=resolved, id=item["id"])
        ctx = await self.context(kind, base, item, href, pending, observed)
        status = kind.status.compute(item, ctx)
        if status == item.get("status"):
            return None
        item["status"] = status
        return Put(replace(record, doc=orjson.dumps(item)), record.version, tuple(hrefs))

    async def recomputed_with(
        self, kind: KindSpec, org: str, key: Key, href: str, now: str, observed: Any
    ) -> Put | None:
        """The status-only rewrite of the stored item at ``key`` given the runtime observation
        ``observed``, which the same transaction stores (``observations.py``)."""
        return await self._recomputed(kind, org, key, href, now, None, observed)

    async def settle_own(self, kind: KindSpec, org: str, key: Key, href: str, item: Item, now: str) -> None:
        """After a committed write of ``item``: compute its status again from what is stored now
        and rewrite it if it changed (an extension's input, such as the policies, may have moved
        meanwhile: every writer settles its own)."""
        try:
            for _ in range(SETTLE_ROUNDS):
                op = await self._recomputed(kind, org, key, href, now, None)
                if op is None or await _committed([op], self.storage):
                    return
        except StorageError as exc:
            if exc.code != "unavailable":  # the write is committed; the next one settles
                raise

    async def _parent(self, kind: KindSpec, org: str, item: Item) -> Item | None:
        if kind.scope != "gvc" or not item.get("gvc"):
            return None
        record = await self.storage.get(Address(self.kinds[kind.scope], org, None, item["gvc"]).key)
        return orjson.loads(record.doc) if record is not None else None


async def _committed(ops: list[Put], storage: Storage) -> bool:
    """Commit status rewrites; ``False`` when one lost a race (read again and retry)."""
    try:
        await storage.commit(ops)
    except StorageError as exc:
        if exc.code == "unavailable":
            raise
        return False
    return True
