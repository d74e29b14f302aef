"""The engine's side of :class:`~plinth.kinds.actions.ActionContext`: what a kind's action
handler may do, implemented once for every kind (it names none).

Reads go through the same access checks as GET (404 before 403); writes through the engine's
pipeline (``Engine.patch``, ``Engine.create_for_action``); records an item owns are stored
under it as ``KindSpec.lifecycle.owned_records`` describes (``Key(org, kind, "{gvc}/{name}", id)``), so
deleting the item deletes them (``engine/deletes.py``); the runtime's placement is the one the
item's status is computed from.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson

from plinth.auth.signing import SigningKey
from plinth.auth.tokens import mint, new_key_name
from plinth.engine import listing, sealed
from plinth.engine.access import Access, Unrestricted, require, stamp_of
from plinth.engine.address import Address
from plinth.engine.opaque import token_key
from plinth.engine.paging import decode_cursor, encode_cursor, page_size
from plinth.engine.render import new_id
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.engine.store_errors import storage_error
from plinth.errors import NotFound, ServiceUnavailable, not_found
from plinth.kinds.actions import SystemFields
from plinth.kinds.base import Item
from plinth.runtime.base import Placement
from plinth.storage.base import Key, Put, Record, StorageError
from plinth.storage.query import ListRequest, PageStart


class EngineActionContext:
    """One call of a declared action on ``info``'s kind, by the caller ``access``.

    ``param`` reads the request's query parameters; ``signing`` yields the server's current
    signing key (only :meth:`mint_key` asks for it)."""

    def __init__(
        self,
        engine: Engine,
        info: RequestInfo,
        access: Access,
        *,
        params: Mapping[str, str] | None = None,
        body: object = None,
        request_id: str = "",
        param: Callable[[str], str | None] = lambda _: None,
        signing: Callable[[], Awaitable[SigningKey]] | None = None,
    ) -> None:
        self.engine, self.info, self.access = engine, info, access
        self.kind = engine.kind_of(info)
        self.org = info.org or ""
        self.gvc = info.gvc
        self.name = info.name
        gvc_part = f"/gvc/{info.gvc}" if info.gvc else ""
        self.href = f"/org/{self.org}{gvc_part}/{self.kind.name}" + (f"/{info.name}" if info.name else "")
        self.params = params or {}
        self.body = body
        self.principal_link = access.principal_link
        self.request_id = request_id
        self._param, self._signing = param, signing

    def limit(self) -> int:
        return page_size(self._param("limit"))

    def cursor(self) -> str | None:
        return self._param("cursor")

    def now(self) -> str:
        return self.engine.clock()

    def new_id(self) -> str:
        return new_id()

    # -- reads ---------------------------------------------------------------------

    def _target(self) -> Address:
        return self.engine.target(RequestInfo(kind=self.info.kind, org=self.info.org, gvc=self.gvc, name=self.name))

    async def item(self, permission: str = "view") -> Item:
        t = self._target()
        await self.engine.read_container(t)
        record = await self.engine.read(t, fresh=True)
        if record is None:
            raise not_found(t.kind.name, t.name)
        found: Item = orjson.loads(record.doc)
        require(self.access, t.kind, permission, t.href, stamp_of(record), lambda: found)
        return found

    async def container(self) -> Item:
        return await self.engine.read_container(self._target()) or {}

    def _other(self, kind: str, name: str | None = None) -> RequestInfo:
        gvc = self.gvc if self.engine.kinds.get(kind) and self.engine.kinds[kind].scope == "gvc" else None
        return RequestInfo(kind=kind, org=self.org, gvc=gvc, name=name)

    async def get(self, kind: str, name: str) -> bytes:
        return await self.engine.get(self._other(kind, name), self.access)

    async def exists(self, kind: str, name: str) -> bool:
        t = self.engine.target(self._other(kind), name)
        try:
            return await self.engine.storage.get(t.key) is not None
        except StorageError as exc:
            raise storage_error(exc, kind, name) from exc

    def allows(self, permission: str, link: str) -> bool:
        # No item yet: stamp None keeps the decision out of the cache.
        return self.access.allows(self.kind, permission, link, None, lambda: None)

    async def query(self, query: Mapping[str, Any], limit: int) -> bytes:
        return await listing.query_items(self.engine, self.info, dict(query), limit, None, self.access)

    async def reveal(self) -> bytes:
        if not self.kind.schema.sealed:
            raise NotFound(f"This action belongs to kinds with sealed values, not to {self.kind.name}")
        # ``GET .../{name}/-reveal``: the item with its sealed fields, for a caller holding ``reveal``.
        t = self.engine.target(self.info)
        for attempt in range(2):
            record = await self.engine.read(t, fresh=attempt > 0)
            if record is None:
                raise not_found(t.kind.name, t.name)
            require(self.access, t.kind, "reveal", t.href, stamp_of(record), lambda r=record: orjson.loads(r.doc))  # type: ignore[misc]
            try:
                sealed_record, values = await sealed.read_values(
                    self.engine.storage, self.engine.sealer, t.kind, t.key, t.href, fresh=attempt > 0
                )
            except StorageError as exc:
                raise ServiceUnavailable("The data store is unavailable; try again shortly") from exc
            # Read apart, the two may straddle a write: read both again, fresh, once.
            if sealed_record is None or sealed_record.version == record.version or attempt > 0:
                return sealed.revealed(record.doc, values)
        raise AssertionError("unreachable")

    # -- writes --------------------------------------------------------------------

    async def patch(
        self,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        on_behalf: bool = False,
        system: SystemFields | None = None,
    ) -> None:
        access = Unrestricted(self.principal_link) if on_behalf else self.access
        await self.engine.patch(self._other(kind, name), dict(patch), access, system=system)

    async def create_on_behalf(self, kind: str, body: Mapping[str, Any]) -> str:
        created = await self.engine.create_for_action(self._other(kind), dict(body), Unrestricted(self.principal_link))
        return created.location or f"/org/{self.org}/{kind}/{body.get('name')}"

    # -- owned records -------------------------------------------------------------

    def _owned_key(self, record_kind: str, record_id: str) -> Key:
        if record_kind not in self.kind.lifecycle.owned_records:
            raise AssertionError(f"{self.kind.name} declares no owned records of kind {record_kind}")
        return Key(self.org, record_kind, self._parent(), record_id)

    def _parent(self) -> str:
        return f"{self.gvc}/{self.name}" if self.gvc else self.name or ""

    async def owned(self, record_kind: str, record_id: str) -> Item | None:
        try:
            record = await self.engine.storage.get(self._owned_key(record_kind, record_id), fresh=True)
        except StorageError as exc:
            raise storage_error(exc, self.kind.name, self.name or "") from exc
        return None if record is None else orjson.loads(record.doc)

    async def put_owned(self, record_kind: str, record_id: str, doc: Item) -> None:
        key = self._owned_key(record_kind, record_id)
        try:
            await self.engine.storage.commit([Put(Record(key, record_id, 1, orjson.dumps(doc)), None)])
        except StorageError as exc:
            raise storage_error(exc, self.kind.name, self.name or "") from exc

    async def owned_page(
        self, record_kind: str, limit: int, cursor: str | None, base: str
    ) -> tuple[list[Item], str | None]:
        self._owned_key(record_kind, "")
        key = await token_key(self.engine.storage)
        start = decode_cursor(key, base, cursor).start if cursor else None
        rows = await self._owned_rows(record_kind, limit + 1, start)
        token = None
        if len(rows) > limit:
            rows = rows[:limit]
            token = encode_cursor(key, base, PageStart(rows[-1].key.parent, rows[-1].key.name))
        return [orjson.loads(r.doc) for r in rows], token

    async def _owned_rows(self, record_kind: str, limit: int, start: PageStart | None) -> list[Record]:
        try:
            return await self.engine.storage.list_page(ListRequest(self.org, record_kind, self._parent(), limit, start))
        except StorageError as exc:
            raise storage_error(exc, self.kind.name, self.name or "") from exc

    # -- the runtime ---------------------------------------------------------------

    async def _placement(self, item: Item, container: Item) -> Placement:
        return await self.engine.statuses.placement(self.kind, self.org, item, container, self._target().href)

    async def locations(self, item: Item, container: Item) -> tuple[str, ...]:
        return tuple((await self._placement(item, container)).locations)

    async def deployments(self, item: Item, container: Item, commands: list[Item]) -> list[Item]:
        return await self.engine.statuses.runtime.deployments(await self._placement(item, container), commands)

    async def submit(self, item: Item, container: Item, command: Item) -> tuple[str, Item]:
        outcome = await self.engine.statuses.runtime.submit(await self._placement(item, container), command)
        return outcome.lifecycle_stage, outcome.status

    # -- keys ----------------------------------------------------------------------

    async def mint_key(self, key_name: str) -> str:
        if self._signing is None:
            raise AssertionError("this context was made without the server's signing key")
        return mint(await self._signing(), self.org, self.name or "", key_name)

    def new_key_name(self) -> str:
        return new_key_name()
