"""The generic engine: every verb for every kind, in one fixed order (``kinds/base.py``).

Writes are read -> build candidate -> check references -> compute status -> one atomic commit
(the record with compare-and-swap on ``version``, its event, and the status refreshes it
causes). A write that loses a race and carried no ``version`` is retried from a fresh read,
so concurrent writers never lose an update; one that carried a stale ``version`` gets 409.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from plinth.auth.generation import GenerationWatcher
from plinth.auth.generation import bump as bump_access_generation
from plinth.engine import escalation, pipeline, sealed
from plinth.engine.access import Access, AccessControl, Unrestricted, require, stamp_of
from plinth.engine.deletes import guard_children, guard_protected, owned_deletes
from plinth.engine.extensions import ExtensionFactory, ExtensionHost, Extensions, WriteChange
from plinth.engine.patch import apply_patch
from plinth.engine.references import check_references, normalise_links, refresh_dependants
from plinth.engine.render import (
    SERVER_ACTOR,
    client_view,
    event_doc,
    finish_item,
    href_of,
    key_for,
    new_id,
    now_iso,
)
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.standard import standard_extensions
from plinth.engine.statuses import StatusInputs
from plinth.errors import (
    BadRequest,
    Conflict,
    FieldError,
    MethodNotAllowed,
    NotFound,
    ServiceUnavailable,
    ValidationFailed,
    not_found,
)
from plinth.kinds.base import DEFAULT_BASE_DOMAIN, Item, KindContext, KindSpec
from plinth.meta import PROTECTED_TAG
from plinth.metrics import COMMIT_RETRIES
from plinth.runtime.base import Runtime
from plinth.runtime.simulated import SimulatedRuntime
from plinth.sealing import Sealer
from plinth.storage.base import AppendEvent, Delete, Key, Operation, Put, Record, Storage, StorageError
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

MAX_ATTEMPTS = 50
#: Item paths whose resolved :class:`Target` an engine keeps (all are dropped when full).
TARGET_CACHE_SIZE = 10_000
#: Names read per page when seeding looks for what is missing.
NAMES_PAGE = 1000
BodyFn = Callable[[Item | None], dict[str, Any]]
SystemFn = Callable[[Item | None], dict[str, Any]]
#: What internal callers (bootstrap, tests) act as: every permission, recorded as the server.
SYSTEM = Unrestricted(SERVER_ACTOR)


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


class Target:
    """A resolved item address: the kind, its org and parent GVC, the item's name, and the
    storage key and link they make (built once: the GET path reads them on every request)."""

    __slots__ = ("gvc", "href", "key", "kind", "name", "org")

    def __init__(self, kind: KindSpec, org: str, gvc: str | None, name: str) -> None:
        self.kind = kind
        self.org = org
        self.gvc = gvc
        self.name = name
        self.key: Key = key_for(kind, org, gvc, name)
        self.href: str = href_of(kind, org, gvc, name)


def storage_error(exc: StorageError, kind: str, name: str) -> Exception:
    """Storage speaks storage; translate with the kind and name attached."""
    if exc.code == "not_found":
        return not_found(kind, name)
    if exc.code == "exists":
        return Conflict(f"{kind.capitalize()} '{name}' already exists", {"kind": kind, "name": name})
    if exc.code == "invalid":
        return BadRequest(f"The query cannot be run: {exc}")
    if exc.code == "conflict":
        return Conflict(
            f"{kind.capitalize()} '{name}' was modified by another request; read it again and retry",
            {"kind": kind, "name": name},
        )
    return storage_unavailable()


#: Seconds a client is asked to wait before retrying when the store is unreachable.
RETRY_AFTER_S = 1


def storage_unavailable() -> ServiceUnavailable:
    """The answer while the store cannot be reached: the reason stays in the server's log,
    since a driver's message names hosts and ports a client has no business knowing."""
    return ServiceUnavailable(
        "The data store is unavailable; try again shortly", headers={"Retry-After": str(RETRY_AFTER_S)}
    )


class Engine:
    """Serves every registered kind. Holds no per-request state."""

    def __init__(
        self,
        storage: Storage,
        kinds: Mapping[str, KindSpec],
        clock: Callable[[], str] = now_iso,
        runtime: Runtime | None = None,
        base_domain: str = DEFAULT_BASE_DOMAIN,
        sealer: Sealer | None = None,
        extensions: Sequence[ExtensionFactory] | None = None,
        access_control: AccessControl | None = None,
    ) -> None:
        self.storage = storage
        self.kinds = kinds
        self.clock = clock
        #: Seals the fields kinds declare ``sealed`` (``engine/sealed.py``); without one, writes
        #: and reveals of such kinds answer 503.
        self.sealer = sealer
        self.statuses = StatusInputs(storage, kinds, runtime or SimulatedRuntime(), base_domain)
        #: The process's policy sets, shared by authorization and the extensions that ask them.
        self.access_control = access_control or AccessControl(storage, kinds, GenerationWatcher(storage))
        host = ExtensionHost(
            storage, kinds, self.access_control, self.statuses.settle_dependants, self.statuses.settle_own
        )
        factories = standard_extensions() if extensions is None else extensions
        #: The cross-kind features (``extensions.py``), called at fixed points of every write.
        self.extensions = Extensions([make(host) for make in factories])
        self.statuses.extensions = self.extensions
        self._targets: dict[RequestInfo, Target] = {}

    # -- addressing -------------------------------------------------------------------

    def kind_of(self, info: RequestInfo) -> KindSpec:
        kind = self.kinds.get(info.kind)
        if kind is None or (info.gvc is not None and kind.scope != "gvc"):
            raise NotFound(f"Unknown kind '{info.kind}'", {"kind": info.kind})
        return kind

    def target(self, info: RequestInfo, name: str | None = None) -> Target:
        """The item ``info`` names (or ``name`` in its collection); 404 or 405 when there is none.

        Targets of item paths are kept (bounded), since each request would build the same one."""
        if name is not None:
            return self._resolve(info, name)
        target = self._targets.get(info)
        if target is None:
            target = self._resolve(info, info.name)
            if len(self._targets) >= TARGET_CACHE_SIZE:
                self._targets.clear()
            self._targets[info] = target
        return target

    def _resolve(self, info: RequestInfo, name: str | None) -> Target:
        kind = self.kind_of(info)
        if name is None:
            raise MethodNotAllowed("This verb needs an item path")
        if kind.scope == "gvc" and info.gvc is None:
            raise NotFound(f"A {kind.name} lives inside a GVC: use /org/{info.org}/gvc/<gvc>/{kind.name}/{name}")
        return Target(kind, info.org or name, info.gvc, name)

    def require_verb(self, kind: KindSpec, verb: str) -> None:
        if verb not in kind.verbs:
            raise MethodNotAllowed(f"Kind '{kind.name}' does not support {verb}")

    # -- reads ------------------------------------------------------------------------

    async def get(self, info: RequestInfo, access: Access = SYSTEM) -> bytes:
        t = self.target(info)
        self.require_verb(t.kind, "get")
        record = await self._get(t.key, t)
        if record is None:
            raise not_found(t.kind.name, t.name)
        require(access, t.kind, "view", t.href, stamp_of(record), lambda: orjson.loads(record.doc))
        return record.doc

    async def read(self, t: Target, fresh: bool = False) -> Record | None:
        """The stored record of ``t`` (no access check: callers check what they serve)."""
        return await self._get(t.key, t, fresh)

    async def read_container(self, t: Target) -> Item | None:
        """The GVC a GVC-scoped ``t`` lives in; 404 when it or the org is missing."""
        return await self._require_container(t)

    async def _get(self, key: Key, t: Target, fresh: bool = False) -> Record | None:
        try:
            return await self.storage.get(key, fresh=fresh)
        except StorageError as exc:
            raise storage_error(exc, t.kind.name, t.name) from exc

    async def _require_container(self, t: Target) -> Item | None:
        """The org must exist for org-scoped kinds; the GVC (returned) for GVC-scoped ones."""
        if t.kind.scope == "root":
            return None
        org_kind = self.kinds["org"]
        if await self._get(key_for(org_kind, t.org, None, t.org), t) is None:
            raise not_found("org", t.org)
        if t.kind.scope == "org" or t.gvc is None:
            return None
        container = self.kinds[t.kind.scope]
        record = await self._get(key_for(container, t.org, None, t.gvc), t)
        if record is None:
            raise not_found(container.name, t.gvc)
        parent: Item = orjson.loads(record.doc)
        return parent

    # -- writes -----------------------------------------------------------------------

    async def create(self, info: RequestInfo, body: Any, access: Access = SYSTEM, dry_run: bool = False) -> WriteResult:
        """POST on a collection: 201 with Location; 409 when the name is taken."""
        self.require_verb(self.kind_of(info), "create")
        body = _object(body)
        t = self.target(info, _body_name(body))
        return await self._write(t, Write(lambda old: body, access, "create", _version_of(body), dry_run))

    async def create_for_action(self, info: RequestInfo, body: Any, access: Access) -> WriteResult:
        """Create an item of a kind clients cannot POST, for an action that adds them (users
        join by ``-invite``). The same pipeline and events as :meth:`create`, without the verb
        check; the action checks its own permission and passes the access the write is made with."""
        body = _object(body)
        t = self.target(info, _body_name(body))
        return await self._write(t, Write(lambda old: body, access, "create"))

    async def upsert(
        self,
        info: RequestInfo,
        body: Any,
        access: Access = SYSTEM,
        dry_run: bool = False,
        system: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """PUT on a collection (``cpln apply``) or on an item: 201 when created, else 200."""
        self.require_verb(self.kind_of(info), "replace")
        body = _object(body)
        name = info.name if info.name is not None else _body_name(body)
        if info.name is not None and "name" in body and body["name"] != info.name:
            raise ValidationFailed([FieldError("name", f"must be '{info.name}', the name in the path")])
        t = self.target(info, name)
        fixed = dict(system or {})
        write = Write(lambda old: body, access, "upsert", _version_of(body), dry_run, lambda old: fixed)
        return await self._write(t, write)

    async def create_missing(self, kind_name: str, org: str, items: Sequence[tuple[Item, Mapping[str, Any]]]) -> int:
        """Create, as the server and in one transaction, those of ``items`` (each a body and the
        server-owned values the server writes with it) whose name is not stored yet: the
        built-ins of an org (``server/bootstrap.py``). Stored items are left as they are, so
        this is idempotent, and cheap when nothing is missing: one list of the kind. Returns
        how many it created."""
        kind = self.kinds[kind_name]
        info = RequestInfo(kind=kind_name, org=org)
        for _ in range(MAX_ATTEMPTS):
            stored = await self._names(kind, org)
            built: list[Built] = []
            for body, system in items:
                if body["name"] in stored:
                    continue
                t = self.target(info, body["name"])
                write = Write(lambda old, body=body: body, SYSTEM, "create", make_system=lambda old, s=system: dict(s))  # type: ignore[misc]
                result = await self._build(t, None, None, None, write)
                assert isinstance(result, Built)
                built.append(result)
            if not built:
                return 0
            try:
                await self.storage.commit([op for b in built for op in b.ops])
            except StorageError as exc:
                if exc.code == "unavailable":
                    raise storage_error(exc, kind_name, "") from exc
                COMMIT_RETRIES.labels(kind_name).inc()
                continue  # another process seeded some of them meanwhile: look again
            await self.statuses.settle_selectors(kind, org, built[-1].now)
            return len(built)
        raise Conflict(f"The {kind_name} items of org '{org}' are changing too fast to seed; retry", {"org": org})

    async def _names(self, kind: KindSpec, org: str) -> set[str]:
        records = await every_record(self.storage, ListRequest(org, kind.name, "", NAMES_PAGE))
        return {record.key.name for record in records}

    async def patch(
        self,
        info: RequestInfo,
        body: Any,
        access: Access = SYSTEM,
        dry_run: bool = False,
        system: SystemFn | None = None,
    ) -> WriteResult:
        """PATCH on an item: the deep merge of ``engine/patch.py`` onto the stored item.

        ``$drop/<field>`` on a field the kind lists in ``droppable_server_lists`` (a service
        account's ``keys``) removes entries by name; nothing else may touch server fields.
        """
        self.require_verb(self.kind_of(info), "patch")
        body = _object(body)
        t = self.target(info)
        if "name" in body and body["name"] != t.name and not t.kind.addressed_by_id:
            raise ValidationFailed([FieldError("name", "cannot be changed; delete and recreate instead")], t.kind.name)

        drops = {f: body.pop(f"$drop/{f}") for f in t.kind.droppable_server_lists if f"$drop/{f}" in body}
        for field, names in drops.items():
            if not isinstance(names, list):
                raise ValidationFailed([FieldError(f"$drop/{field}", "must be an array of names")], t.kind.name)

        def merged(old: Item | None) -> dict[str, Any]:
            assert old is not None
            patch_body = pipeline.strip_server_owned(t.kind, body)
            return apply_patch(client_view(t.kind, old), patch_body, t.kind.name, t.org)

        def server_values(old: Item | None) -> dict[str, Any]:
            values = dict(system(old)) if system else {}
            for field, names in drops.items():
                kept = [e for e in (old or {}).get(field, []) if not (isinstance(e, dict) and e.get("name") in names)]
                values[field] = kept
            return values

        return await self._write(t, Write(merged, access, "update", _version_of(body), dry_run, server_values))

    async def _write(self, t: Target, w: Write) -> WriteResult:
        for _ in range(MAX_ATTEMPTS):
            parent = await self._require_container(t)
            # Fresh: a write's precondition is judged on the stored version, never a cached one.
            old_record = await self._get(t.key, t, fresh=True)
            if old_record is None and w.mode == "update":
                raise not_found(t.kind.name, t.name)
            old: Item | None = orjson.loads(old_record.doc) if old_record else None
            if old is not None and old_record is not None and w.mode != "update":
                if not w.access.allows(t.kind, "view", t.href, stamp_of(old_record), lambda old=old: old):  # type: ignore[misc]
                    # A POST or PUT of a name the caller may not view answers as for a free name
                    # (403 naming create) unless the caller may create it: then 409, the name is
                    # taken, which unique names tell anyone who may create (docs/api.md, "Errors").
                    require(w.access, t.kind, "create", t.href, None, lambda old=old: old)  # type: ignore[misc]
                    raise storage_error(StorageError("exists"), t.kind.name, t.name)
                if w.mode == "create":
                    raise storage_error(StorageError("exists"), t.kind.name, t.name)
            if old is None and not w.access.holds_any(t.kind, "create"):
                # No policy grants create on any item of this kind: refused before the body is
                # worked on (a create is otherwise judged on its candidate, once built).
                require(w.access, t.kind, "create", t.href, None, lambda: None)
            sealed_record: Record | None = None
            if old is not None and old_record is not None:
                require(w.access, t.kind, "edit", t.href, stamp_of(old_record), lambda old=old: old)  # type: ignore[misc]
                if t.kind.builtin_is_read_only and old.get("origin") == "builtin" and w.access is not SYSTEM:
                    raise Conflict(f"Built-in {t.kind.name} '{t.name}' cannot be edited", {"kind": t.kind.name})
                if t.kind.sealed:
                    # Opened to merge and compare in the clear; never stored or served from here.
                    sealed_record, values = await self._sealed_values(t)
                    old = {**old, **values}
            if w.expected is not None and old is not None and old["version"] != w.expected:
                raise storage_error(StorageError("conflict"), t.kind.name, t.name)
            built = await self._build(t, parent, old_record, old, w, sealed_record)
            if isinstance(built, WriteResult):
                return built
            committed = await self._commit(built.change, built.ops, built.result, pinned=w.expected is not None)
            if committed is not None:  # else it lost a race: read again and retry
                await self._settle(built.change, built.links)
                if committed.status == 201 and t.kind.shown_once is not None:
                    shown = t.kind.shown_once(orjson.loads(committed.doc))
                    committed = replace(committed, doc=orjson.dumps(shown))
                return committed
        raise Conflict("The item is changing too fast to apply this write; retry", {"name": t.name})

    async def _build(
        self,
        t: Target,
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
        now = self.clock()
        item_id = old["id"] if old else (t.name if t.kind.addressed_by_id else new_id())
        ctx = KindContext(
            org=t.org, now=now, gvc=t.gvc, parent=parent, id=item_id, base_domain=self.statuses.base_domain
        )
        stripped = pipeline.strip_server_owned(t.kind, w.make_body(old))
        system = w.make_system(old) if w.make_system else None
        candidate, errors = pipeline.build_candidate(t.kind, stripped, old, ctx, t.name, system)
        if old is None:
            # Judged on this candidate, as it will be stored (policies never see sealed values).
            require(w.access, t.kind, "create", t.href, None, lambda: sealed.public(t.kind, candidate))
        stamp = stamp_of(old_record) if old_record is not None else None
        for permission in t.kind.write_permissions(candidate, old) if not errors else ():
            # Visible: the caller creates the item or already passed ``edit`` on the stored one.
            require(w.access, t.kind, permission, t.href, stamp, lambda: sealed.public(t.kind, candidate), visible=True)
        refs = t.kind.references(candidate, t.org) if not errors else []
        ref_errors, resolved, hrefs = await check_references(self.storage, self.kinds, t.org, refs, {})
        errors += ref_errors
        ctx = replace(ctx, resolved=resolved)
        if not errors:
            errors += t.kind.validate_resolved(candidate, ctx)
        if errors:
            raise ValidationFailed(errors, t.kind.name, t.name)
        normalise_links(candidate, refs, t.org)
        # Judged on the result: a policy may grant only what its writer holds (escalation.py).
        await escalation.check(self.storage, self.kinds, w.access, t.kind, t.href, t.org, candidate, old, old_record)
        if old is not None and old_record is not None and _unchanged(t.kind, candidate, old):
            return WriteResult(200, old_record.doc, outcome="unchanged")
        if old is not None and t.kind.protected_change is not None:
            change = t.kind.protected_change(candidate, old)
            if change is not None:
                await guard_protected(self.storage, self.kinds, t.kind, t.org, t.name, t.href, f"be {change}")
        ctx = await self.statuses.context(t.kind, ctx, candidate, t.href)
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
            status=t.kind.compute_status(candidate, ctx),
        )
        values = sealed.values_of(t.kind, item)
        item = sealed.public(t.kind, item)
        doc = orjson.dumps(item)
        created = old is None
        outcome = "created" if created else "updated"
        result = WriteResult(201 if created else 200, doc, t.href if created else None, outcome)
        write = self._change(t, old, item, now)
        if w.dry_run:
            await self.extensions.dry_run(write)
            return result
        event_id, event = event_doc("created" if created else "updated", t.href, version, w.access.principal_link, now)
        ops: list[Operation] = [
            Put(Record(t.key, item_id, version, doc), old["version"] if old else None, tuple(hrefs)),
            AppendEvent(t.key, event_id, now, event),
        ]
        if t.kind.affects_access:
            ops.append(bump_access_generation())
        if t.kind.sealed:
            ops += self._sealed_ops(t, item_id, version, values, sealed_record)
        ops += await refresh_dependants(
            self.storage, self.kinds, t.kind, t.org, t.href, t.name, item, now, self.statuses.context
        )
        before = set(await self._links_of(t.kind, old, t.org)) if old is not None else set()
        ops += await self.statuses.refresh_referenced(t.kind, t.org, t.href, before, set(hrefs), now)
        ops += await self.extensions.before_commit(write)  # last: a quota's tally locks its record
        return Built(result, ops, item, before | set(hrefs), now, write)

    def _change(self, t: Target, before: Item | None, after: Item | None, now: str) -> WriteChange:
        return WriteChange(t.kind, t.org, t.gvc, t.name, t.key, t.href, before, after, now)

    async def _settle(self, c: WriteChange, links: set[str]) -> None:
        """After a committed write or delete (``c``): the statuses that depend on it, on what it
        links to or linked to, on what a query may select it for, and what the extensions
        settle (``after_commit``: a policy's grants), made right."""
        await self.statuses.settle_dependants(c.kind, c.org, c.href, c.name, c.after, c.now)
        if links and self._feeds_referrers(c.kind):
            await self.statuses.settle(c.kind, c.org, links, c.now)
        await self.statuses.settle_selectors(c.kind, c.org, c.now)
        await self.extensions.after_commit(c)

    async def _sealed_values(self, t: Target) -> tuple[Record | None, dict[str, Any]]:
        """The stored sealed record of ``t`` (fresh) and its fields in the clear."""
        try:
            return await sealed.read_values(self.storage, self.sealer, t.kind, t.key, t.href, fresh=True)
        except StorageError as exc:
            raise storage_error(exc, t.kind.name, t.name) from exc

    def _sealed_ops(
        self, t: Target, item_id: str, version: int, values: dict[str, Any], stored: Record | None
    ) -> list[Operation]:
        """Seal ``values`` beside the item (a fresh nonce every write), or drop the sealed record
        when the item holds none; compare-and-swap on the sealed record's stored version."""
        if not values:
            return [Delete(stored.key, stored.version, watched=False)] if stored is not None else []
        record = sealed.seal(self.sealer, t.kind, t.key, t.href, item_id, version, values)
        return [Put(record, stored.version if stored is not None else None, watched=False)]

    def _feeds_referrers(self, kind: KindSpec) -> bool:
        """Whether items of ``kind`` feed other items' status by linking to them."""
        return any(kind.name in k.status_referrers for k in self.kinds.values())

    async def _links_of(self, kind: KindSpec, item: Item, org: str) -> list[str]:
        """The full links ``item`` holds (for refreshing what it stops linking to)."""
        if not self._feeds_referrers(kind):
            return []
        _, _, hrefs = await check_references(self.storage, self.kinds, org, kind.references(item, org), {})
        return hrefs

    async def _commit(
        self, c: WriteChange, ops: list[Operation], result: WriteResult, pinned: bool
    ) -> WriteResult | None:
        try:
            await self.storage.commit(ops)
        except StorageError as exc:
            if exc.code == "unavailable":
                raise storage_error(exc, c.kind.name, c.name) from exc
            refused = await self.extensions.refused(c, exc)
            if refused is not None:  # a quota's limit
                raise refused from exc
            if pinned and exc.key == c.key and exc.code == "conflict":
                raise storage_error(exc, c.kind.name, c.name) from exc
            COMMIT_RETRIES.labels(c.kind.name).inc()
            return None
        return result

    async def delete(self, info: RequestInfo, access: Access = SYSTEM, dry_run: bool = False) -> None:
        """Delete an item; with ``dry_run`` only the checks run (missing, protected, dependants)."""
        t = self.target(info)
        self.require_verb(t.kind, "delete")
        for _ in range(MAX_ATTEMPTS):
            record = await self._get(t.key, t, fresh=True)
            if record is None:
                raise not_found(t.kind.name, t.name)
            item = orjson.loads(record.doc)
            permission = t.kind.delete_permission
            require(access, t.kind, permission, t.href, stamp_of(record), lambda item=item: item)  # type: ignore[misc]
            if item.get("origin") == "builtin":
                raise Conflict(f"Built-in {t.kind.name} '{t.name}' cannot be deleted", {"kind": t.kind.name})
            if str(item.get("tags", {}).get(PROTECTED_TAG, "")).lower() == "true":
                raise Conflict(
                    f"{t.kind.title} '{t.name}' is protected by the tag {PROTECTED_TAG}=true; remove the tag first",
                    {"kind": t.kind.name, "name": t.name},
                )
            if any(k.scope == t.kind.name for k in self.kinds.values()):
                await guard_children(self.storage, self.kinds, t.kind, t.org, t.name)
            await guard_protected(self.storage, self.kinds, t.kind, t.org, t.name, t.href)
            now = self.clock()
            forgotten = await self._forget(t, access.principal_link, now)
            if dry_run:
                return
            event_id, event = event_doc("deleted", t.href, record.version, access.principal_link, now)
            ops: list[Operation] = [Delete(t.key, record.version), AppendEvent(t.key, event_id, now, event)]
            if t.kind.sealed:
                sealed_record = await self._get(sealed.sealed_key(t.key), t, fresh=True)
                if sealed_record is not None:
                    ops.append(Delete(sealed_record.key, sealed_record.version, watched=False))
            ops += forgotten
            ops += await owned_deletes(self.storage, t.kind, t.org, t.gvc, t.name)
            if t.kind.affects_access or forgotten:
                ops.append(bump_access_generation())
            ops += await refresh_dependants(
                self.storage, self.kinds, t.kind, t.org, t.href, t.name, None, now, self.statuses.context
            )
            linked = set(await self._links_of(t.kind, item, t.org))
            ops += await self.statuses.refresh_referenced(t.kind, t.org, t.href, linked, set(), now)
            change = self._change(t, item, None, now)
            ops += await self.extensions.before_commit(change)  # last: a quota's tally locks its record
            if await self._commit(change, ops, WriteResult(202, b""), pinned=False) is not None:
                await self._settle(change, linked)
                return
        raise Conflict("The item is changing too fast to delete; retry", {"name": t.name})

    async def _forget(self, t: Target, actor: str, now: str) -> list[Operation]:
        """Updates that drop the links to ``t`` which referring items must let go of (the kinds'
        ``forget`` hooks); 409 when one of them would break its kind's rules without it."""
        ops: list[Operation] = []
        for kind in self.kinds.values():
            if kind.forget is None:
                continue
            for record in await self.storage.referrers(t.org, t.href, [kind.name]):
                old = orjson.loads(record.doc)
                item = kind.forget(old, t.href, t.org)
                if item is None:
                    continue
                gvc = record.key.parent or None
                base = KindContext(org=t.org, now=now, gvc=gvc, id=old["id"], base_domain=self.statuses.base_domain)
                errors = kind.validate(item, old, base)
                href = href_of(kind, t.org, gvc, record.key.name)
                if errors:
                    first = errors[0]
                    raise Conflict(
                        f"{t.kind.title} '{t.name}' cannot be deleted: without it, {kind.name} "
                        f"'{record.key.name}' would break a rule ({first.path}: {first.message})",
                        {
                            "kind": t.kind.name,
                            "name": t.name,
                            "dependant": href,
                            "errors": [e.as_dict() for e in errors],
                        },
                    )
                version = record.version + 1
                item = {**item, "version": version, "lastModified": now}
                _, _, hrefs = await check_references(self.storage, self.kinds, t.org, kind.references(item, t.org), {})
                event_id, event = event_doc("updated", href, version, actor, now)
                ops += [
                    Put(Record(record.key, record.id, version, orjson.dumps(item)), record.version, tuple(hrefs)),
                    AppendEvent(record.key, event_id, now, event),
                ]
        return ops


def _unchanged(kind: KindSpec, candidate: Item, old: Item) -> bool:
    """A write that changes neither what the client controls nor what the server wrote."""
    return client_view(kind, candidate) == client_view(kind, old) and all(
        candidate.get(f) == old.get(f) for f in kind.server_fields
    )


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object")
    return body


def _body_name(body: dict[str, Any]) -> str:
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationFailed([FieldError("name", "is required")])
    return name


def _version_of(body: dict[str, Any]) -> int | None:
    """A client-sent ``version`` is a precondition (the official CLI sends it in PATCH)."""
    version = body.get("version")
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValidationFailed([FieldError("version", "must be an integer")])
    return version
