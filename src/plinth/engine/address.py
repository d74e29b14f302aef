"""Addressing: one type, :class:`Address`, for where an item lives and how it is named.

An item is named by its kind, org, parent GVC (GVC-scoped kinds only) and name. From those four
come its storage :class:`~plinth.storage.base.Key`, its link (``href``) and the ``links`` its
envelope carries; this module is the one place that derives them, from a request path
(:class:`Addresses`) or a stored key (:meth:`Address.stored`).
"""

from __future__ import annotations

from collections.abc import Mapping

from plinth.engine.requestinfo import RequestInfo
from plinth.errors import MethodNotAllowed, NotFound
from plinth.kinds.base import KindSpec
from plinth.meta import collection_href, item_href
from plinth.storage.base import Key

#: Item paths whose resolved :class:`Address` is kept (all are dropped when full).
CACHE_SIZE = 10_000


class Address:
    """An item's address: the kind, its org and parent GVC, the item's name, and the storage
    key and link they make (built once: the GET path reads them on every request).

    Orgs are stored with an empty org column, so listing them needs no special query; a
    ``gvc`` given for a kind that is not GVC-scoped is ignored."""

    __slots__ = ("gvc", "href", "key", "kind", "name", "org")

    def __init__(self, kind: KindSpec, org: str, gvc: str | None, name: str) -> None:
        self.kind = kind
        self.org = org
        self.gvc = gvc
        self.name = name
        if kind.scope == "root":
            self.key = Key("", kind.name, "", name)
            self.href = f"/org/{name}"
        else:
            parent = gvc if kind.scope == "gvc" else None
            self.key = Key(org, kind.name, parent or "", name)
            self.href = item_href(org, kind.name, name, parent)

    @classmethod
    def stored(cls, kind: KindSpec, key: Key) -> Address:
        """The address of the item of ``kind`` stored under ``key``."""
        return cls(kind, key.org, key.parent or None, key.name)

    def links(self) -> list[dict[str, str]]:
        """The envelope's ``links``: itself, its org, its GVC, and the kind's sub-resources."""
        links = [{"rel": "self", "href": self.href}]
        if self.kind.scope != "root":
            links.append({"rel": "org", "href": f"/org/{self.org}"})
        if self.kind.scope == "gvc" and self.gvc is not None:
            links.append({"rel": "gvc", "href": f"/org/{self.org}/gvc/{self.gvc}"})
        for rel, sub in self.kind.presentation.item_links:
            links.append({"rel": rel, "href": f"{self.href}/{sub}"})
        return links


def list_href(kind: KindSpec, org: str | None, gvc: str | None) -> str:
    """The link of a kind's collection in ``org`` (and ``gvc``)."""
    if kind.scope == "root" or org is None:
        return "/org"
    return collection_href(org, kind.name, gvc if kind.scope == "gvc" else None)


class Addresses:
    """Resolves request paths to addresses for the served kinds (404 or 405 when none)."""

    def __init__(self, kinds: Mapping[str, KindSpec]) -> None:
        self.kinds = kinds
        self._cache: dict[RequestInfo, Address] = {}

    def kind_of(self, info: RequestInfo) -> KindSpec:
        kind = self.kinds.get(info.kind)
        if kind is None or (info.gvc is not None and kind.scope != "gvc"):
            raise NotFound(f"Unknown kind '{info.kind}'", {"kind": info.kind})
        return kind

    def target(self, info: RequestInfo, name: str | None = None) -> Address:
        """The item ``info`` names (or ``name`` in its collection); 404 or 405 when there is none.

        Addresses of item paths are kept (bounded), since each request would build the same one."""
        if name is not None:
            return self._resolve(info, name)
        address = self._cache.get(info)
        if address is None:
            address = self._resolve(info, info.name)
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[info] = address
        return address

    def _resolve(self, info: RequestInfo, name: str | None) -> Address:
        kind = self.kind_of(info)
        if name is None:
            raise MethodNotAllowed("This verb needs an item path")
        if kind.scope == "gvc" and info.gvc is None:
            raise NotFound(f"A {kind.name} lives inside a GVC: use /org/{info.org}/gvc/<gvc>/{kind.name}/{name}")
        return Address(kind, info.org or name, info.gvc, name)
