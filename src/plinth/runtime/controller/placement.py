"""Where a GVC runs for the controller: its ``locationLinks``, then what its ``locationQuery``
selects, the query evaluated by the server.

The controller does not evaluate queries itself (it would be a second implementation of the
query language, bound to drift): it asks ``POST /org/{org}/location/-query`` with the GVC's
query, reads every page (the ``next`` link), and keeps the **enabled** locations in the order
the server answered (the query's ``sort``, else by name), after the linked ones, each once.
That is the placement the server computes for its statuses (docs/api.md, Locations).

:class:`PlacementCache` asks again only when the GVC changed (its ``version``), when the
org's locations changed (the informer watches them), or at a relist; otherwise the answer of
the last query is used. A query the server refuses or that fails leaves the GVC's previous
answer (none at first), and is reported by :meth:`PlacementCache.errors` until it succeeds.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import httpx

from plinth.runtime.controller.informer import gvc_locations

#: Pages read at most per query (a bound: 50 a page is far beyond any org's locations).
MAX_PAGES = 100


def location_query(gvc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    query = ((gvc.get("spec") or {}).get("staticPlacement") or {}).get("locationQuery")
    return query if isinstance(query, Mapping) else None


class PlacementCache:
    """Each GVC's locations, with its ``locationQuery`` answered by the server."""

    def __init__(self, client: httpx.AsyncClient, org: str) -> None:
        self.client, self.org = client, org
        self._selected: dict[str, tuple[Hashable, list[str]]] = {}
        self.errors: dict[str, str] = {}

    async def refresh(self, gvcs: Mapping[str, Mapping[str, Any]], generation: Hashable) -> None:
        """Ask the server again for each query whose GVC or ``generation`` (the locations'
        state, the relist count) changed since it was last answered."""
        for gone in set(self._selected) - set(gvcs):
            del self._selected[gone]
        for name, gvc in gvcs.items():
            query = location_query(gvc)
            if query is None:
                self._selected.pop(name, None)
                self.errors.pop(name, None)
                continue
            key = (gvc.get("version"), generation)
            cached = self._selected.get(name)
            if cached is not None and cached[0] == key and name not in self.errors:
                continue
            try:
                selected = await self._query(query)
            except (httpx.HTTPError, ValueError) as exc:
                self.errors[name] = f"GVC {name}: its locationQuery could not be evaluated: {exc}"
                continue
            self.errors.pop(name, None)
            self._selected[name] = (key, selected)

    async def _query(self, query: Mapping[str, Any]) -> list[str]:
        body = {**query, "kind": "location"}
        response = await self.client.post(f"/org/{self.org}/location/-query", json=body)
        names: list[str] = []
        for _ in range(MAX_PAGES):
            if response.status_code != 200:
                raise ValueError(f"HTTP {response.status_code}: {response.text[:300]}")
            page = response.json()
            names += [
                str(doc["name"])
                for doc in page.get("items") or ()
                if (doc.get("spec") or {}).get("enabled", True) is True
            ]
            following = next((link["href"] for link in page.get("links") or () if link.get("rel") == "next"), None)
            if following is None:
                break
            response = await self.client.get(following)
        return names

    def locations(self, gvc: Mapping[str, Any]) -> list[str]:
        """The GVC's locations: its links, then what its query selected (module docstring)."""
        linked = gvc_locations(gvc)
        selected = self._selected.get(str(gvc.get("name")), (None, []))[1] if location_query(gvc) else []
        return list(dict.fromkeys([*linked, *selected]))
