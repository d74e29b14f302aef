"""The engine's parts, wired once, and the steps every write and delete shares.

:class:`EngineCore` holds the store, the served kinds, the clock, the sealer, the status
inputs, the process's policy sets and the extensions, and resolves request paths to
addresses (``engine/address.py``). What writes (``engine/writes.py``, ``engine/build.py``),
deletes (``engine/deletes.py``) and seeding (``engine/seeding.py``) share lives here: reading
a record with storage errors interpreted, requiring the container, the change the extensions
see, and settling what depends on a committed change. ``engine/service.py``'s ``Engine`` is
the facade over it that serves the verbs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import orjson

from plinth.auth.generation import GenerationWatcher
from plinth.engine.access import AccessControl
from plinth.engine.address import Address, Addresses
from plinth.engine.dependencies import dependants_of
from plinth.engine.extensions import ExtensionFactory, ExtensionHost, Extensions, StoreRecords, WriteChange
from plinth.engine.references import check_references
from plinth.engine.render import now_iso
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.standard import standard_extensions
from plinth.engine.statuses import StatusInputs
from plinth.engine.store_errors import storage_error
from plinth.errors import MethodNotAllowed, not_found
from plinth.kinds.base import DEFAULT_BASE_DOMAIN, DEFAULT_ENDPOINT_FORMAT, Item, KindSpec
from plinth.runtime.base import Runtime
from plinth.runtime.simulated import SimulatedRuntime
from plinth.sealing import Sealer
from plinth.storage.base import Key, Record, Storage, StorageError


class EngineCore:
    """Serves every registered kind's shared steps. Holds no per-request state."""

    def __init__(
        self,
        storage: Storage,
        kinds: Mapping[str, KindSpec],
        clock: Callable[[], str] = now_iso,
        runtime: Runtime | None = None,
        base_domain: str = DEFAULT_BASE_DOMAIN,
        endpoint_format: str = DEFAULT_ENDPOINT_FORMAT,
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
        self.statuses = StatusInputs(storage, kinds, runtime or SimulatedRuntime(), base_domain, endpoint_format)
        #: The process's policy sets, shared by authorization and the extensions that ask them.
        self.access_control = access_control or AccessControl(storage, kinds, GenerationWatcher(storage))
        host = ExtensionHost(
            StoreRecords(storage), kinds, self.access_control, self.statuses.settle_dependants, self.statuses.settle_own
        )
        factories = standard_extensions() if extensions is None else extensions
        #: The cross-kind features (``extensions.py``), called at fixed points of every write.
        self.extensions = Extensions([make(host) for make in factories])
        self.statuses.extensions = self.extensions
        self.addresses = Addresses(kinds)

    # -- addressing -------------------------------------------------------------------

    def kind_of(self, info: RequestInfo) -> KindSpec:
        return self.addresses.kind_of(info)

    def target(self, info: RequestInfo, name: str | None = None) -> Address:
        """The item ``info`` names (or ``name`` in its collection); 404 or 405 when there is none."""
        return self.addresses.target(info, name)

    def require_verb(self, kind: KindSpec, verb: str) -> None:
        if verb not in kind.access.verbs:
            raise MethodNotAllowed(f"Kind '{kind.name}' does not support {verb}")

    # -- reads ------------------------------------------------------------------------

    async def read(self, t: Address, fresh: bool = False) -> Record | None:
        """The stored record of ``t`` (no access check: callers check what they serve)."""
        return await self.read_key(t.key, t, fresh)

    async def read_key(self, key: Key, t: Address, fresh: bool = False) -> Record | None:
        """The record under ``key``, storage errors answered as about ``t``."""
        try:
            return await self.storage.get(key, fresh=fresh)
        except StorageError as exc:
            raise storage_error(exc, t.kind.name, t.name) from exc

    async def read_container(self, t: Address) -> Item | None:
        """The org must exist for org-scoped kinds; the GVC (returned) for GVC-scoped ones;
        404 when it or the org is missing."""
        if t.kind.scope == "root":
            return None
        if await self.read_key(Address(self.kinds["org"], t.org, None, t.org).key, t) is None:
            raise not_found("org", t.org)
        if t.kind.scope == "org" or t.gvc is None:
            return None
        container = self.kinds[t.kind.scope]
        record = await self.read_key(Address(container, t.org, None, t.gvc).key, t)
        if record is None:
            raise not_found(container.name, t.gvc)
        parent: Item = orjson.loads(record.doc)
        return parent

    # -- what a committed change settles ------------------------------------------------

    @staticmethod
    def change(t: Address, before: Item | None, after: Item | None, now: str) -> WriteChange:
        return WriteChange(t.kind, t.org, t.gvc, t.name, t.key, t.href, before, after, now)

    async def settle(self, c: WriteChange, links: set[str]) -> None:
        """After a committed write or delete (``c``): the statuses that depend on it, on what it
        links to or linked to, on what a query may select it for, and what the extensions
        settle (``after_commit``: a policy's grants), made right."""
        await self.statuses.settle_dependants(c.kind, c.org, c.href, c.name, c.after, c.now)
        if links and self.feeds_referrers(c.kind):
            await self.statuses.settle(c.kind, c.org, links, c.now)
        await self.statuses.settle_selectors(c.kind, c.org, c.now)
        await self.extensions.after_commit(c)

    async def refusal(self, c: WriteChange, exc: StorageError, pinned: bool) -> Exception | None:
        """The error a refused commit of ``c`` answers (``None``: retry it): an extension's (a
        quota's limit), or, for a write ``pinned`` to a client-sent version, the 409 of its race."""
        refused = await self.extensions.refused(c, exc)
        if refused is not None:
            return refused
        if pinned and exc.key == c.key and exc.code == "conflict":
            return storage_error(exc, c.kind.name, c.name)
        return None

    def feeds_referrers(self, kind: KindSpec) -> bool:
        """Whether items of ``kind`` feed other items' status by linking to them."""
        return bool(dependants_of(self.kinds, kind.name).linked)

    async def links_of(self, kind: KindSpec, item: Item, org: str) -> list[str]:
        """The full links ``item`` holds (for refreshing what it stops linking to)."""
        if not self.feeds_referrers(kind):
            return []
        _, _, hrefs = await check_references(self.storage, self.kinds, org, kind.rules.references(item, org), {})
        return hrefs
