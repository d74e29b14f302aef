"""What a kind's action handler may do: the narrow protocol between a kind and the engine.

A kind declares each endpoint it serves beyond its verbs as a
:class:`~plinth.kinds.base.KindAction` whose ``handler`` is an ``async`` function of one
:class:`ActionContext` answering an :class:`Answer`. The kinds layer imports no engine,
storage or server (``.importlinter``), so the handler reaches them only through this protocol;
``engine/action_context.py`` implements it once for every kind, and ``server/actions.py`` finds
the declared action and calls its handler. Registering an action is declaring it.

Every method below goes through the engine as the verbs do: reads check the caller's access
(404 before 403), writes run the kind pipeline (rules, events, access generation), and storage
failures answer 503. The item an action is *on* is the path's item (``on_item``) or, for a
collection action, the collection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, WithJsonSchema

from plinth.kinds.base import Item

#: ``system`` of :meth:`ActionContext.patch`: the stored item (``None`` when absent) -> the
#: server-owned fields to set, which a client's PATCH may not touch.
SystemFields = Callable[[Item | None], Item]


@dataclass(frozen=True, slots=True)
class Answer:
    """What an action answers: ``body`` is JSON-able (encoded by the server) or bytes already
    encoded (an item as a read answers it); ``headers`` are added as given (``location``)."""

    body: Any
    status: int = 200
    headers: tuple[tuple[str, str], ...] = field(default=())


class ActionContext(Protocol):
    """One call of a declared action, and what its handler may do with it."""

    #: The org of the path; the GVC of a GVC-scoped path; the item's name (``None`` on a
    #: collection action); the path of the item (or collection) the action is on.
    org: str
    gvc: str | None
    name: str | None
    href: str
    #: The values of the ``{x}`` segments of the declared path (``{"email": ...}``).
    params: Mapping[str, str]
    #: The decoded request body (``None`` when there is none); the handler validates it.
    body: object
    #: The caller, as events record it (``/org/acme/user/ada@example.com``).
    principal_link: str
    #: The request's id, as error bodies quote it.
    request_id: str

    def limit(self) -> int:
        """``?limit=``: the page size asked for (the default when absent; 400 when invalid)."""
        ...

    def cursor(self) -> str | None:
        """``?cursor=``: where a paged answer continues."""
        ...

    def now(self) -> str:
        """The engine's clock, as items' ``created`` show it."""
        ...

    def new_id(self) -> str:
        """A fresh id, as items' ``id`` are made."""
        ...

    # -- reads ---------------------------------------------------------------------

    async def item(self, permission: str = "view") -> Item:
        """The item the action is on, read fresh: 404 when there is none (or the kind is not
        this kind), 403 unless the caller holds ``permission`` on it."""
        ...

    async def container(self) -> Item:
        """The GVC the item lives in (``{}`` for an org-scoped kind); 404 when it is missing."""
        ...

    async def get(self, kind: str, name: str) -> bytes:
        """The item ``name`` of ``kind`` in this org (and GVC), as a GET answers it (``view``)."""
        ...

    async def exists(self, kind: str, name: str) -> bool:
        """Whether ``name`` of ``kind`` is stored in this org, whatever the caller may see."""
        ...

    def allows(self, permission: str, link: str) -> bool:
        """Whether the caller holds ``permission`` of this kind on ``link`` (a collection, or an
        item not yet stored: only policies with ``target: all`` cover it)."""
        ...

    async def query(self, query: Mapping[str, Any], limit: int) -> bytes:
        """What ``-query`` on this kind's collection answers for ``query`` (a page)."""
        ...

    async def reveal(self) -> bytes:
        """The item with its sealed fields in the clear; 403 without ``reveal`` on it."""
        ...

    # -- writes through the kind pipeline -------------------------------------------

    async def patch(
        self,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        on_behalf: bool = False,
        system: SystemFields | None = None,
    ) -> None:
        """PATCH ``name`` of ``kind`` in this org. With ``on_behalf`` the write is the server's
        on the caller's behalf (the handler checked the permission the action needs)."""
        ...

    async def create_on_behalf(self, kind: str, body: Mapping[str, Any]) -> str:
        """Create an item of ``kind`` in this org on the caller's behalf (a kind clients
        cannot POST, for an action that adds them); the new item's link."""
        ...

    # -- records the item owns (stored under it, deleted with it) -------------------

    async def owned(self, record_kind: str, record_id: str) -> Item | None:
        """The record ``record_id`` of ``record_kind`` the item owns; ``None`` when there is none."""
        ...

    async def put_owned(self, record_kind: str, record_id: str, doc: Item) -> None:
        """Store (or replace) a record the item owns."""
        ...

    async def owned_page(
        self, record_kind: str, limit: int, cursor: str | None, base: str
    ) -> tuple[list[Item], str | None]:
        """A page of the item's records of ``record_kind`` and the cursor of the next page
        (``None`` on the last); cursors are bound to ``base`` (the listing's path)."""
        ...

    # -- the runtime that runs the item (workloads) ---------------------------------

    async def locations(self, item: Item, container: Item) -> tuple[str, ...]:
        """The locations the runtime places ``item`` in (its GVC's placement)."""
        ...

    async def deployments(self, item: Item, container: Item, commands: list[Item]) -> list[Item]:
        """The runtime's deployments of ``item``, one per location, showing ``commands``."""
        ...

    async def submit(self, item: Item, container: Item, command: Item) -> tuple[str, Item]:
        """Hand ``command`` to the runtime: its lifecycle stage and status after the handoff."""
        ...

    # -- keys ----------------------------------------------------------------------

    async def mint_key(self, key_name: str) -> str:
        """A new secret key named ``key_name`` for the principal the action is on (a service
        account), signed by the server's current signing key. It is answered once; never stored."""
        ...

    def new_key_name(self) -> str:
        """A fresh key name, as a principal's ``keys`` list it."""
        ...


#: A declared action's handler (``KindAction.handler``).
Handler = Callable[[ActionContext], Awaitable[Answer]]


# -- answer models ---------------------------------------------------------------------
#
# ``KindAction.answer`` is a pydantic model only for its JSON Schema: the OpenAPI document's
# schema of the answer (``server/_openapi_schemas.py`` hoists it under the model's class name).
# Handlers answer plain JSON-able values; the OpenAPI tests check those against the schema.

#: The document's shared components an answer model may point at (a ``$ref`` the server's
#: document resolves; the kinds layer does not build it).
COMPONENTS = "#/components/schemas/"


def component(name: str) -> dict[str, str]:
    """A reference to the document's shared component ``name`` (``Link``, ``Error``)."""
    return {"$ref": COMPONENTS + name}


#: ``links``: ``[{rel, href}]``, the shared ``Link`` component.
Links = Annotated[list[dict[str, str]], WithJsonSchema({"type": "array", "items": component("Link")})]


def _without_defaults(schema: dict[str, Any]) -> None:
    """Answer fields that may be absent are ``X | SkipJsonSchema[None] = None``: absent, never
    null. The ``default: null`` pydantic writes for them would contradict their type."""
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class ClosedAnswer(BaseModel):
    """An answer with exactly the fields its model declares (``additionalProperties: false``)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_without_defaults)


class OpenAnswer(BaseModel):
    """An answer that may carry fields beyond the declared ones (the runtime's)."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_without_defaults)
