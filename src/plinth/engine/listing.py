"""Collection reads: lists, query results and event logs, paged by keyset with ``next`` links.

Items are spliced in as the bytes they were stored as, so a page of 50 costs one query and
no JSON re-encoding of the items.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import quote

import orjson

from plinth.engine.access import Access, require, stamp_of
from plinth.engine.address import Address, list_href
from plinth.engine.opaque import open_cursor, seal_cursor, token_key
from plinth.engine.paging import decode_cursor, encode_cursor
from plinth.engine.querywire import parse_query
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import SYSTEM, Engine
from plinth.engine.store_errors import storage_error
from plinth.errors import BadRequest, NotFound, not_found
from plinth.kinds.base import KindSpec
from plinth.storage.base import Record, StorageError
from plinth.storage.query import Filter, ListRequest, PageStart


def _splice(head: dict[str, Any], docs: list[bytes], tail: dict[str, Any]) -> bytes:
    """``{...head, "items": [docs...], ...tail}`` without decoding the item documents."""
    start = orjson.dumps(head)[:-1]
    end = orjson.dumps(tail)[1:]
    return start + b',"items":[' + b",".join(docs) + b"]," + end


def _sort_value(record: Record, flt: Filter) -> Any:
    if flt.sort is None:
        return None
    node: Any = orjson.loads(record.doc)
    for part in flt.sort.path:
        node = node.get(part) if isinstance(node, dict) else None
    return None if isinstance(node, dict | list) else node


def parent_for(kind: KindSpec, info: RequestInfo) -> str | None:
    if kind.scope == "gvc":
        return info.gvc  # None: across every GVC of the org
    return ""


def org_column(kind: KindSpec, info: RequestInfo) -> str:
    return "" if kind.scope == "root" else info.org or ""


#: A page scans at most this many rows past its start before it answers with what it found and a
#: ``next`` link, so a caller who may view few items cannot make one request read a whole
#: collection. Only then can ``next`` appear without a visible row after the page (docs/api.md).
MAX_SCAN = 10_000
#: Rows read per store round trip while looking for visible ones.
SCAN_BATCH = 500


def _visible(engine: Engine, kind: KindSpec, access: Access, record: Record) -> bool:
    href = Address.stored(kind, record.key).href
    return access.allows(kind, "view", href, stamp_of(record), lambda: orjson.loads(record.doc))


async def _page(
    engine: Engine, kind: KindSpec, request: ListRequest, access: Access
) -> tuple[list[Record], Record | None]:
    """Up to ``limit`` rows the caller may view, and the row to continue after (``None``: no more).

    ``next`` must not tell whether hidden rows follow: the scan goes on past a full page until it
    finds one more visible row (then the page ends at its last visible row) or the end (no
    ``next``). Only a scan stopped by ``MAX_SCAN`` continues after a row that may be hidden; the
    cursor is sealed, so it does not say which."""
    if access.sees_every(kind, "view"):
        rows = await _fetch(engine, kind, replace(request, limit=request.limit + 1))
        if len(rows) > request.limit:
            return rows[: request.limit], rows[request.limit - 1]
        return rows, None
    if not access.holds_any(kind, "view"):
        return [], None  # no policy grants view on any item of the kind: nothing to scan for
    found: list[Record] = []
    start, scanned = request.start, 0
    batch_size = max(request.limit + 1, SCAN_BATCH)
    while True:
        batch = await _fetch(engine, kind, replace(request, limit=batch_size, start=start))
        for row in batch:
            scanned += 1
            if _visible(engine, kind, access, row):
                if len(found) == request.limit:
                    return found, found[-1]
                found.append(row)
            if scanned >= MAX_SCAN:
                return found, row
        if len(batch) < batch_size:
            return found, None
        last = batch[-1]
        start = PageStart(last.key.parent, last.key.name, _sort_value(last, request.filter))


async def _fetch(engine: Engine, kind: KindSpec, request: ListRequest) -> list[Record]:
    try:
        return await engine.storage.list_page(request)
    except StorageError as exc:
        raise storage_error(exc, kind.name, "") from exc


async def list_items(
    engine: Engine, info: RequestInfo, limit: int, cursor: str | None, access: Access = SYSTEM
) -> bytes:
    kind = engine.kind_of(info)
    engine.require_verb(kind, "list")
    if info.org is not None and kind.scope != "root":
        await require_org(engine, info)
    self_href = list_href(kind, info.org, info.gvc)
    key = await token_key(engine.storage)
    start = decode_cursor(key, self_href, cursor).start if cursor else None
    request = ListRequest(org_column(kind, info), kind.name, parent_for(kind, info), limit, start)
    rows, last = await _page(engine, kind, request, access)
    links = [{"rel": "self", "href": self_href}]
    if last is not None:
        token = encode_cursor(key, self_href, PageStart(last.key.parent, last.key.name))
        links.append({"rel": "next", "href": f"{self_href}?limit={limit}&cursor={token}"})
    return _splice({"kind": "list", "itemKind": kind.name}, [r.doc for r in rows], {"links": links})


async def query_items(
    engine: Engine, info: RequestInfo, body: Any, limit: int, cursor: str | None, access: Access = SYSTEM
) -> bytes:
    """POST ``-query`` with a query body, or GET ``-query?cursor=`` to continue one."""
    kind = engine.kind_of(info)
    engine.require_verb(kind, "list")
    start = None
    base = f"{list_href(kind, info.org, info.gvc)}/-query"
    key = await token_key(engine.storage)
    if cursor:
        decoded = decode_cursor(key, base, cursor)
        if decoded.query is None:
            raise BadRequest("The paging cursor does not belong to a query", {"parameter": "cursor"})
        body, start = decoded.query, decoded.start
    elif body is None:
        raise BadRequest("A query needs a body (POST) or a cursor (GET)")
    flt, normalised = parse_query(kind, body)
    await require_org(engine, info)
    request = ListRequest(org_column(kind, info), kind.name, parent_for(kind, info), limit, start, flt)
    rows, last = await _page(engine, kind, request, access)
    links = [{"rel": "self", "href": base}]
    if last is not None:
        token = encode_cursor(key, base, PageStart(last.key.parent, last.key.name, _sort_value(last, flt)), normalised)
        links.append({"rel": "next", "href": f"{base}?limit={limit}&cursor={token}"})
    docs = [r.doc for r in rows]
    if normalised["fetch"] == "links":
        docs = [
            orjson.dumps({"kind": kind.name, "name": r.key.name, "links": orjson.loads(r.doc)["links"]}) for r in rows
        ]
    head = {"kind": "queryresult", "itemKind": kind.name}
    return _splice(head, docs, {"links": links, "query": normalised})


async def require_org(engine: Engine, info: RequestInfo) -> None:
    if info.org is None:
        return
    org_kind = engine.kinds["org"]
    try:
        record = await engine.storage.get(engine.target(RequestInfo(kind="org", org=info.org, name=info.org)).key)
    except StorageError as exc:
        raise storage_error(exc, org_kind.name, info.org) from exc
    if record is None:
        raise not_found("org", info.org)


def _encode_seq(key: bytes, context: str, seq: int) -> str:
    return seal_cursor(key, orjson.dumps({"v": 1, "seq": seq}), context)


def _decode_seq(key: bytes, context: str, token: str) -> int:
    """The event seq an event-log cursor continues after: a whole number (not ``true``, which
    Python counts as one) that this store sealed for this item's log; else 400."""
    raw = open_cursor(key, token, context)
    try:
        body = orjson.loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        body = None
    seq = body.get("seq") if isinstance(body, dict) else None
    if type(seq) is not int or seq < 0 or body.get("v") != 1:  # type: ignore[union-attr]
        raise BadRequest("The paging cursor is not valid", {"parameter": "cursor"})
    return seq


async def event_log(
    engine: Engine, info: RequestInfo, limit: int, cursor: str | None, access: Access = SYSTEM
) -> bytes:
    """Events of an item, oldest first; the log outlives the item (404 only when both are absent).

    Reading it needs ``view`` on the item (judged on the stored item, or by link once deleted).
    """
    t = engine.target(info)
    self_href = f"{t.href}/-eventlog"
    key = await token_key(engine.storage)
    after = _decode_seq(key, self_href, cursor) if cursor else 0
    try:
        events = await engine.storage.events(t.key, after, limit + 1)
        record = await engine.storage.get(t.key)
    except StorageError as exc:
        raise storage_error(exc, t.kind.name, t.name) from exc
    if not (after > 0 or events or record is not None):
        raise not_found(t.kind.name, t.name)
    require(access, t.kind, "view", t.href, stamp_of(record), lambda: orjson.loads(record.doc) if record else None)
    links = [{"rel": "self", "href": self_href}]
    if len(events) > limit:
        events = events[:limit]
        token = quote(_encode_seq(key, self_href, events[-1].seq))
        links.append({"rel": "next", "href": f"{self_href}?limit={limit}&cursor={token}"})
    return _splice({"kind": "list", "itemKind": "event"}, [e.doc for e in events], {"links": links})


__all__ = ["NotFound", "event_log", "list_items", "query_items"]
