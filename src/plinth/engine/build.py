"""Everything of a write but its commit: from the stored item and the request to the operations.

``build`` runs steps 4 to 10 of the write pipeline (docs/architecture.md, "The write
pipeline"): the candidate (``engine/pipeline.py``), the permissions judged on it, the
references and ``validate_resolved``, the escalation rule, the no-op check and a protected
change, then the status (computed here, before the commit) and the envelope, and last the
operations: the record with compare-and-swap on ``version``, its event, the access generation,
the sealed record, the status refreshes it causes and what the extensions add.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import orjson

from plinth.auth.generation import bump as bump_access_generation
from plinth.engine import escalation, pipeline, sealed
from plinth.engine.access import Access, require, stamp_of
from plinth.engine.address import Address
from plinth.engine.core import EngineCore
from plinth.engine.deletes import guard_protected
from plinth.engine.extensions import WriteChange
from plinth.engine.references import check_references, normalise_links, refresh_dependants
from plinth.engine.render import client_view, event_doc, finish_item, new_id
from plinth.errors import ValidationFailed
from plinth.kinds.base import Item, KindContext, KindSpec
from plinth.sealing import Sealer
from plinth.storage.base import AppendEvent, Delete, Operation, Put, Record

BodyFn = Callable[[Item | None], dict[str, Any]]
SystemFn = Callable[[Item | None], dict[str, Any]]


@dataclass(frozen=True)
class Write:
    """One write request: how to build the body from the stored item, who asks, and how."""

    make_body: BodyFn
    access: Access
    mode: str  # create | upsert | update
    expected: int | None = None
    dry_run: bool = False
    #: Server-owned fields the server itself writes (never from a client body).
    make_system: SystemFn | None = None


@dataclass(frozen=True, slots=True)
class WriteResult:
    status: int
    doc: bytes
    location: str | None = None
    #: ``created``, ``updated`` or ``unchanged`` (a write that changes nothing stores nothing);
    #: answered as the ``x-plinth-outcome`` header, so ``plinth apply`` can say which without a GET.
    outcome: str = ""


@dataclass(frozen=True, slots=True)
class Built:
    """A write ready to commit: its answer, its operations, the item, the links it holds and
    held before (whose statuses may need settling after the commit), and the write's time."""

    result: WriteResult
    ops: list[Operation]
    item: Item
    links: set[str]
    now: str
    change: WriteChange


async def build(
    core: EngineCore,
    t: Address,
    parent: Item | None,
    old_record: Record | None,
    old: Item | None,
    w: Write,
    sealed_record: Record | None = None,
) -> WriteResult | Built:
    """Everything of a write but its commit: the checks, the item and the operations to
    commit; or the answer itself when there is nothing to commit (no change, a dry run).

    ``old`` holds the stored item's sealed fields in the clear (``sealed_record`` is where
    they are kept); the record stored, its answer and what other items see never do."""
    now = core.clock()
    item_id = old["id"] if old else (t.name if t.kind.schema.addressed_by_id else new_id())
    ctx = KindContext(
        org=t.org,
        now=now,
        gvc=t.gvc,
        parent=parent,
        id=item_id,
        base_domain=core.statuses.base_domain,
        endpoint_format=core.statuses.endpoint_format,
    )
    stripped = pipeline.strip_server_owned(t.kind, w.make_body(old))
    system = w.make_system(old) if w.make_system else None
    candidate, errors = pipeline.build_candidate(t.kind, stripped, old, ctx, t.name, system)
    if old is None:
        # Judged on this candidate, as it will be stored (policies never see sealed values).
        require(w.access, t.kind, "create", t.href, None, lambda: sealed.public(t.kind, candidate))
    stamp = stamp_of(old_record) if old_record is not None else None
    for permission in t.kind.access.write_permissions(candidate, old) if not errors else ():
        # Visible: the caller creates the item or already passed ``edit`` on the stored one.
        require(w.access, t.kind, permission, t.href, stamp, lambda: sealed.public(t.kind, candidate), visible=True)
    refs = t.kind.rules.references(candidate, t.org) if not errors else []
    ref_errors, resolved, hrefs = await check_references(core.storage, core.kinds, t.org, refs, {})
    errors += ref_errors
    ctx = replace(ctx, resolved=resolved)
    if not errors:
        errors += t.kind.rules.validate_resolved(candidate, ctx)
    if errors:
        raise ValidationFailed(errors, t.kind.name, t.name)
    normalise_links(candidate, refs, t.org)
    # Judged on the result: a policy may grant only what its writer holds (escalation.py).
    await escalation.check(core.storage, core.kinds, w.access, t.kind, t.href, t.org, candidate, old, old_record)
    if old is not None and old_record is not None and _unchanged(t.kind, candidate, old):
        return WriteResult(200, old_record.doc, outcome="unchanged")
    if old is not None and t.kind.rules.protected_change is not None:
        change = t.kind.rules.protected_change(candidate, old)
        if change is not None:
            await guard_protected(core.storage, core.kinds, t.kind, t.org, t.name, t.href, f"be {change}")
    # The status is computed here, before the commit; what a concurrent write leaves stale is
    # settled after it (``EngineCore.settle``).
    ctx = await core.statuses.context(t.kind, ctx, candidate, t.href)
    version = old["version"] + 1 if old else 1
    item = finish_item(
        t.kind,
        candidate,
        org=t.org,
        gvc=t.gvc,
        item_id=item_id,
        version=version,
        created=old["created"] if old else now,
        modified=now,
        status=t.kind.status.compute(candidate, ctx),
    )
    values = sealed.values_of(t.kind, item)
    item = sealed.public(t.kind, item)
    doc = orjson.dumps(item)
    created = old is None
    outcome = "created" if created else "updated"
    result = WriteResult(201 if created else 200, doc, t.href if created else None, outcome)
    write = core.change(t, old, item, now)
    if w.dry_run:
        await core.extensions.dry_run(write)
        return result
    event_id, event = event_doc("created" if created else "updated", t.href, version, w.access.principal_link, now)
    ops: list[Operation] = [
        Put(Record(t.key, item_id, version, doc), old["version"] if old else None, tuple(hrefs)),
        AppendEvent(t.key, event_id, now, event),
    ]
    if t.kind.access.affects_access:
        ops.append(bump_access_generation())
    if t.kind.schema.sealed:
        ops += _sealed_ops(core.sealer, t, item_id, version, values, sealed_record)
    ops += await refresh_dependants(
        core.storage, core.kinds, t.kind, t.org, t.href, t.name, item, now, core.statuses.context
    )
    before = set(await core.links_of(t.kind, old, t.org)) if old is not None else set()
    ops += await core.statuses.refresh_referenced(t.kind, t.org, t.href, before, set(hrefs), now)
    ops += await core.extensions.before_commit(write)  # last: a quota's tally locks its record
    return Built(result, ops, item, before | set(hrefs), now, write)


def _sealed_ops(
    sealer: Sealer | None, t: Address, item_id: str, version: int, values: dict[str, Any], stored: Record | None
) -> list[Operation]:
    """Seal ``values`` beside the item (a fresh nonce every write), or drop the sealed record
    when the item holds none; compare-and-swap on the sealed record's stored version."""
    if not values:
        return [Delete(stored.key, stored.version, watched=False)] if stored is not None else []
    record = sealed.seal(sealer, t.kind, t.key, t.href, item_id, version, values)
    return [Put(record, stored.version if stored is not None else None, watched=False)]


def _unchanged(kind: KindSpec, candidate: Item, old: Item) -> bool:
    """A write that changes neither what the client controls nor what the server wrote."""
    return client_view(kind, candidate) == client_view(kind, old) and all(
        candidate.get(f) == old.get(f) for f in kind.schema.server_fields
    )
