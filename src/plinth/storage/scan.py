"""Reading every record a list request selects, a page at a time.

``Storage.list_page`` answers one keyset page; callers that need all of them (seeding, the
policy set, the items a query may select) walk the pages here instead of each writing the
same loop. Only for unsorted requests: the next page starts after the last row's parent and
name, which is the keyset order when ``request.filter`` has no sort.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from plinth.storage.base import Record, Storage
from plinth.storage.query import ListRequest, PageStart


async def pages(storage: Storage, request: ListRequest) -> AsyncIterator[list[Record]]:
    """Each non-empty page of ``request`` (``request.limit`` rows at most), in keyset order."""
    assert request.filter.sort is None, "an unsorted request: pages continue by parent and name"
    while True:
        page = await storage.list_page(request)
        if page:
            yield page
        if len(page) < request.limit:
            return
        request = replace(request, start=PageStart(page[-1].key.parent, page[-1].key.name))


async def every_record(storage: Storage, request: ListRequest) -> list[Record]:
    """Every record ``request`` selects, read ``request.limit`` at a time."""
    return [record async for page in pages(storage, request) for record in page]
