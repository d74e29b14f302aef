"""Where a GVC is placed: its ``locationLinks``, then what its ``locationQuery`` selects.

The query is evaluated like a ``-query`` of the location kind (``querywire.parse_query``, the
storage's own semantics in ``storage/evaluate.py``) over the org's locations, keeping the
enabled ones: in the query's sort order when it has one, else by name. A query that cannot
be run (a property locations do not have) selects nothing: the GVC's own rules refuse such a
query when it is written, so only a GVC stored before them can hold one. Links are taken as
they are, each once, in order: a GVC stored before locations were served may name one that
does not exist, and it keeps its placement.

An engine extension (:class:`Placements`): only the statuses of kinds that declare
the status dependency ``ReadsPlacements`` are given placements (``ctx.placements``), so no other kind pays
for resolving them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson

from plinth.engine.dependencies import reads_placements
from plinth.engine.extensions import Extension, ExtensionHost, ExtensionStore
from plinth.engine.querywire import parse_query
from plinth.errors import ValidationFailed
from plinth.kinds.base import Item, KindContext, KindSpec
from plinth.kinds.links import placement_locations
from plinth.storage.evaluate import matches, sort_key
from plinth.storage.query import Filter, ListRequest, Term

#: Locations read per page when a query is resolved.
PAGE = 500


def location_query(gvc: Item) -> Any:
    """The GVC's ``locationQuery``, or ``None``."""
    return ((gvc.get("spec") or {}).get("staticPlacement") or {}).get("locationQuery")


async def gvc_placement(records: ExtensionStore, kinds: Mapping[str, KindSpec], org: str, gvc: Item) -> tuple[str, ...]:
    """The names of the locations ``gvc`` is placed in, links first (see the module docstring)."""
    linked = placement_locations(gvc)
    query = location_query(gvc)
    if query is None or "location" not in kinds:
        return linked
    try:
        flt, _ = parse_query(kinds["location"], {**query, "kind": "location"})
    except ValidationFailed:
        return linked
    selected = [doc for doc in await _locations(records, org) if _enabled(doc) and matches(flt, doc, "")]
    selected.sort(key=lambda doc: sort_key(flt.sort, doc, "", doc["name"]))
    return tuple(dict.fromkeys([*linked, *(doc["name"] for doc in selected)]))


def _enabled(doc: Item) -> bool:
    return (doc.get("spec") or {}).get("enabled", True) is True


async def _locations(records: ExtensionStore, org: str) -> list[Item]:
    return [orjson.loads(record.doc) for record in await records.every(ListRequest(org, "location", "", PAGE))]


def holds_query(path: str) -> Filter:
    """A storage filter for items holding something at the dotted ``path`` (a GVC's query)."""
    return Filter(terms=(Term("exists", path=tuple(path.split("."))),))


class Placements(Extension):
    """Fills ``ctx.placements`` for the statuses of kinds that read them: where each GVC the
    context holds (its ``parent``, GVCs among ``resolved``) is placed."""

    def __init__(self, host: ExtensionHost) -> None:
        self._records = host.records
        self._kinds = host.kinds

    async def status_inputs(self, kind: KindSpec, item: Item, ctx: KindContext) -> KindContext:
        if not reads_placements(kind):
            return ctx
        gvcs = [ctx.parent] if ctx.parent is not None else []
        gvcs += [other for other in ctx.resolved.values() if other is not None and other.get("kind") == "gvc"]
        found: dict[str, tuple[str, ...]] = {}
        for gvc in gvcs:
            href = f"/org/{ctx.org}/gvc/{gvc.get('name')}"
            if href not in found:
                found[href] = await gvc_placement(self._records, self._kinds, ctx.org, gvc)
        return replace(ctx, placements=found)
