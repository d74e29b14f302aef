"""The engine extension protocol: cross-kind features behind hooks the engine calls generically.

A feature that spans kinds (quotas, the statuses policies settle, GVC placements) is one
:class:`EngineExtension`. The engine names none of them: it builds each from its
:data:`ExtensionFactory` with an :class:`ExtensionHost` (all an extension may read or call),
and at fixed points of every write it calls every extension's hooks, in registration order:

- ``before_commit(change)``: operations added last to the write's transaction (a quota's
  tally: it locks its record until the commit); for a create, update or delete.
- ``dry_run(change)``: what a dry run checks instead (it commits nothing); may raise.
- ``refused(change, error)``: the client error for a transaction the store refused on the
  extension's account (``StorageError("limit")``), or ``None`` when it is not the extension's.
- ``after_commit(change)``: after the commit, make what depends on it right (statuses).
- ``status_inputs(kind, item, ctx)``: the :class:`KindContext` a status is computed from,
  with what the extension provides filled in (``ctx.grants``, ``ctx.placements``).
- ``seed(org, now)`` and ``seed_basis()``: records every org holds (seeded at start, and with
  a new org); the basis goes into the start-up fingerprint (``server/bootstrap.py``), so a
  change of it seeds existing stores again.

The kind knowledge an extension acts on is declared by the kinds (``KindSpec.access.grant_targets``,
the status dependencies ``ReadsPlacements`` and ``AsksGrants``, ``kinds/quota.py``'s
definitions), never named here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from plinth.engine.access import AccessControl
from plinth.kinds.base import Item, KindContext, KindSpec
from plinth.storage.base import Key, Operation, Record, Storage, StorageError
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record


@dataclass(frozen=True, slots=True)
class WriteChange:
    """One write of an item as the hooks see it: ``before`` is ``None`` for a create,
    ``after`` for a delete."""

    kind: KindSpec
    org: str
    gvc: str | None
    name: str
    key: Key
    href: str
    before: Item | None
    after: Item | None
    now: str

    @property
    def created(self) -> bool:
        return self.before is None and self.after is not None

    @property
    def deleted(self) -> bool:
        return self.after is None


#: Which dependants a settle looks at (kind, item): the others' status cannot have changed.
DependantFilter = Callable[[KindSpec, Item], bool]
#: After a commit: make the statuses that depend on an item right (``StatusInputs.settle_dependants``:
#: kind, org, href, name, the item or ``None``, now, and a ``DependantFilter`` or ``None``).
SettleDependants = Callable[[KindSpec, str, str, str, Item | None, str, DependantFilter | None], Awaitable[None]]


#: After a commit: make an item's own status right (kind, org, key, href, item, now).
SettleOwn = Callable[[KindSpec, str, Key, str, Item, str], Awaitable[None]]


class ExtensionStore(Protocol):
    """What an extension reads and writes of the store, and no more: a record by key (fresh
    when it decides on it), every record a request selects, and a transaction of its own (a
    quota seeded). Its operations in a write's transaction it returns from ``before_commit``."""

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None: ...
    async def every(self, request: ListRequest) -> list[Record]: ...
    async def commit(self, ops: Sequence[Operation]) -> None: ...


class StoreRecords:
    """The :class:`ExtensionStore` over the engine's :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None:
        return await self._storage.get(key, fresh=fresh)

    async def every(self, request: ListRequest) -> list[Record]:
        return await every_record(self._storage, request)

    async def commit(self, ops: Sequence[Operation]) -> None:
        await self._storage.commit(ops)


@dataclass(frozen=True)
class ExtensionHost:
    """What an extension may use: the records it reads and writes (not the whole store), the
    served kinds, the process's policy sets (shared with authorization), and the two
    status-settling steps."""

    records: ExtensionStore
    kinds: Mapping[str, KindSpec]
    policies: AccessControl
    settle_dependants: SettleDependants
    settle_own: SettleOwn


class EngineExtension(Protocol):
    """The hooks (see the module docstring); :class:`Extension` does nothing in each."""

    def seed_basis(self) -> Any: ...
    async def seed(self, org: str, now: str) -> int: ...
    async def before_commit(self, change: WriteChange) -> list[Operation]: ...
    async def dry_run(self, change: WriteChange) -> None: ...
    async def refused(self, change: WriteChange, error: StorageError) -> Exception | None: ...
    async def after_commit(self, change: WriteChange) -> None: ...
    async def status_inputs(self, kind: KindSpec, item: Item, ctx: KindContext) -> KindContext: ...


class Extension:
    """An extension that does nothing: subclasses override the hooks they need."""

    def seed_basis(self) -> Any:
        return None

    async def seed(self, org: str, now: str) -> int:
        return 0

    async def before_commit(self, change: WriteChange) -> list[Operation]:
        return []

    async def dry_run(self, change: WriteChange) -> None:
        return None

    async def refused(self, change: WriteChange, error: StorageError) -> Exception | None:
        return None

    async def after_commit(self, change: WriteChange) -> None:
        return None

    async def status_inputs(self, kind: KindSpec, item: Item, ctx: KindContext) -> KindContext:
        return ctx


ExtensionFactory = Callable[[ExtensionHost], EngineExtension]


class Extensions:
    """The engine's extensions, each hook called on every one in order."""

    def __init__(self, items: Sequence[EngineExtension]) -> None:
        self.items = tuple(items)

    def find(self, cls: type[Any]) -> Any:
        """The registered extension of type ``cls`` (for tests and maintenance commands)."""
        return next(e for e in self.items if isinstance(e, cls))

    def seed_basis(self) -> list[Any]:
        return [e.seed_basis() for e in self.items]

    async def seed(self, org: str, now: str) -> int:
        return sum([await e.seed(org, now) for e in self.items])

    async def before_commit(self, change: WriteChange) -> list[Operation]:
        ops: list[Operation] = []
        for e in self.items:
            ops += await e.before_commit(change)
        return ops

    async def dry_run(self, change: WriteChange) -> None:
        for e in self.items:
            await e.dry_run(change)

    async def refused(self, change: WriteChange, error: StorageError) -> Exception | None:
        for e in self.items:
            answer = await e.refused(change, error)
            if answer is not None:
                return answer
        return None

    async def after_commit(self, change: WriteChange) -> None:
        for e in self.items:
            await e.after_commit(change)

    async def status_inputs(self, kind: KindSpec, item: Item, ctx: KindContext) -> KindContext:
        for e in self.items:
            ctx = await e.status_inputs(kind, item, ctx)
        return ctx
