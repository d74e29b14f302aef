"""The delete of any kind: what it must check, what it takes along, and its commit.

``delete`` reads the item fresh, checks the kind's ``delete_permission``, refuses built-ins
and items tagged ``cpln/protected=true``, runs the guards below and the kinds' ``forget``
hooks on the items linking to it, and commits the delete, its event, the owned and sealed
records, the status refreshes and what the extensions add in one transaction, through the
compare-and-swap loop (``engine/commits.py``); then settles what depended on the item.

- a container (a GVC) that still holds items is not deleted: 409 naming them;
- an item that items of a kind listing its kind in ``protects`` link to is not deleted: 409
  naming them (a volume set a workload mounts); nor changed as its kind's ``protected_change``
  says they would not survive (a location a GVC is placed in, disabled);
- the records stored under the item (``owned_records``: a workload's commands) go with it,
  and so does what a runtime controller reported of it (``observed_records.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from plinth.auth.generation import bump as bump_access_generation
from plinth.engine import sealed
from plinth.engine.access import Access, require, stamp_of
from plinth.engine.address import Address
from plinth.engine.commits import Commit, until_committed
from plinth.engine.core import EngineCore
from plinth.engine.dependencies import runtime
from plinth.engine.observed_records import read_observed
from plinth.engine.references import GUARD_NAMES, check_references, child_names, refresh_dependants
from plinth.engine.render import event_doc
from plinth.errors import Conflict, not_found
from plinth.kinds.base import KindContext, KindSpec
from plinth.meta import PROTECTED_TAG
from plinth.storage.base import AppendEvent, Delete, Operation, Put, Record, Storage, StorageError
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

#: Records read per page when collecting an item's owned records.
OWNED_PAGE = 500


async def delete(core: EngineCore, t: Address, access: Access, dry_run: bool = False) -> None:
    """Delete ``t``; with ``dry_run`` only the checks run (missing, protected, dependants)."""

    async def attempt() -> Commit[None] | None:
        record = await core.read(t, fresh=True)
        if record is None:
            raise not_found(t.kind.name, t.name)
        item = orjson.loads(record.doc)
        require(access, t.kind, t.kind.access.delete_permission, t.href, stamp_of(record), lambda: item)
        if item.get("origin") == "builtin":
            raise Conflict(f"Built-in {t.kind.name} '{t.name}' cannot be deleted", {"kind": t.kind.name})
        if str(item.get("tags", {}).get(PROTECTED_TAG, "")).lower() == "true":
            title = t.kind.presentation.title
            raise Conflict(
                f"{title} '{t.name}' is protected by the tag {PROTECTED_TAG}=true; remove the tag first",
                {"kind": t.kind.name, "name": t.name},
            )
        if any(k.scope == t.kind.name for k in core.kinds.values()):
            await guard_children(core.storage, core.kinds, t.kind, t.org, t.name)
        await guard_protected(core.storage, core.kinds, t.kind, t.org, t.name, t.href)
        now = core.clock()
        forgotten = await _forget(core, t, access.principal_link, now)
        if dry_run:
            return None
        event_id, event = event_doc("deleted", t.href, record.version, access.principal_link, now)
        ops: list[Operation] = [Delete(t.key, record.version), AppendEvent(t.key, event_id, now, event)]
        if t.kind.schema.sealed:
            sealed_record = await core.read_key(sealed.sealed_key(t.key), t, fresh=True)
            if sealed_record is not None:
                ops.append(Delete(sealed_record.key, sealed_record.version, watched=False))
        if runtime(t.kind) is not None:  # what a runtime controller reported of it goes too
            observed, _ = await read_observed(core.storage, t.key, fresh=True)
            if observed is not None:
                ops.append(Delete(observed.key, observed.version, watched=False))
        ops += forgotten
        ops += await owned_deletes(core.storage, t.kind, t.org, t.gvc, t.name)
        if t.kind.access.affects_access or forgotten:
            ops.append(bump_access_generation())
        ops += await refresh_dependants(
            core.storage, core.kinds, t.kind, t.org, t.href, t.name, None, now, core.statuses.context
        )
        linked = set(await core.links_of(t.kind, item, t.org))
        ops += await core.statuses.refresh_referenced(t.kind, t.org, t.href, linked, set(), now)
        change = core.change(t, item, None, now)
        ops += await core.extensions.before_commit(change)  # last: a quota's tally locks its record

        async def refused(exc: StorageError) -> Exception | None:
            return await core.refusal(change, exc, pinned=False)

        return Commit(ops, lambda: core.settle(change, linked), refused)

    def too_fast() -> Exception:
        return Conflict("The item is changing too fast to delete; retry", {"name": t.name})

    await until_committed(core.storage, t.kind.name, attempt, too_fast)


async def _forget(core: EngineCore, t: Address, actor: str, now: str) -> list[Operation]:
    """Updates that drop the links to ``t`` which referring items must let go of (the kinds'
    ``forget`` hooks); 409 when one of them would break its kind's rules without it."""
    ops: list[Operation] = []
    for kind in core.kinds.values():
        if kind.rules.forget is None:
            continue
        for record in await core.storage.referrers(t.org, t.href, [kind.name]):
            old = orjson.loads(record.doc)
            item = kind.rules.forget(old, t.href, t.org)
            if item is None:
                continue
            gvc = record.key.parent or None
            base = KindContext(
                org=t.org,
                now=now,
                gvc=gvc,
                id=old["id"],
                base_domain=core.statuses.base_domain,
                endpoint_format=core.statuses.endpoint_format,
            )
            errors = kind.rules.validate(item, old, base)
            href = Address.stored(kind, record.key).href
            if errors:
                first = errors[0]
                raise Conflict(
                    f"{t.kind.presentation.title} '{t.name}' cannot be deleted: without it, {kind.name} "
                    f"'{record.key.name}' would break a rule ({first.path}: {first.message})",
                    {"kind": t.kind.name, "name": t.name, "dependant": href, "errors": [e.as_dict() for e in errors]},
                )
            version = record.version + 1
            item = {**item, "version": version, "lastModified": now}
            _, _, hrefs = await check_references(
                core.storage, core.kinds, t.org, kind.rules.references(item, t.org), {}
            )
            event_id, event = event_doc("updated", href, version, actor, now)
            ops += [
                Put(Record(record.key, record.id, version, orjson.dumps(item)), record.version, tuple(hrefs)),
                AppendEvent(record.key, event_id, now, event),
            ]
    return ops


async def guard_children(storage: Storage, kinds: Mapping[str, KindSpec], kind: KindSpec, org: str, name: str) -> None:
    """409 while the container ``name`` still holds items of the kinds scoped to it."""
    children = await child_names(storage, kinds, kind.name, org, name)
    if children:
        shown = ", ".join(children[:GUARD_NAMES]) + (" and more" if len(children) > GUARD_NAMES else "")
        raise Conflict(
            f"{kind.presentation.title} '{name}' still holds {shown}; delete them first",
            {"kind": kind.name, "name": name, "dependants": children[:GUARD_NAMES]},
        )


async def guard_protected(
    storage: Storage,
    kinds: Mapping[str, KindSpec],
    kind: KindSpec,
    org: str,
    name: str,
    href: str,
    change: str | None = None,
) -> None:
    """409 while items of kinds that protect this one link to it (``KindSpec.rules.protects``): for
    its delete, or for the ``change`` an update makes (``"be disabled"``: ``protected_change``)."""
    guards = [k.name for k in kinds.values() if kind.name in k.rules.protects]
    if not guards:
        return
    holders = await storage.referrers(org, href, guards)
    if holders:
        names = [f"{r.key.kind}/{r.key.name}" for r in holders[:GUARD_NAMES]]
        shown = ", ".join(names) + (" and more" if len(holders) > GUARD_NAMES else "")
        message = (
            f"{kind.presentation.title} '{name}' is in use by {shown}; change or delete them first"
            if change is None
            else f"{kind.presentation.title} '{name}' cannot {change}: it is in use by {shown}; change them first"
        )
        raise Conflict(message, {"kind": kind.name, "name": name, "dependants": names})


async def owned_deletes(storage: Storage, kind: KindSpec, org: str, gvc: str | None, name: str) -> list[Operation]:
    """Deletes of the records stored under the item (``KindSpec.lifecycle.owned_records``)."""
    ops: list[Operation] = []
    parent = f"{gvc}/{name}" if gvc else name
    for record_kind in kind.lifecycle.owned_records:
        owned = await every_record(storage, ListRequest(org, record_kind, parent, limit=OWNED_PAGE))
        ops += [Delete(r.key, r.version) for r in owned]
    return ops
