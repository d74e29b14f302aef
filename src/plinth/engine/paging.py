"""Opaque, authenticated continuation cursors for keyset paging.

A cursor seals (``engine/opaque.py``: AES-256-GCM, the collection's link as associated data) a
small JSON object ``{"v": 1, "p": parent, "n": name, "s": sort value, "q": the query (for query
results)}``. The row it names may be one the caller may not view (a page that stopped scanning
there), so it must say nothing: a caller sees only base64url of random-looking bytes, and a
cursor that was changed, made by another store, or made for another collection is a 400. The
org and kind always come from the path, never from the cursor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from plinth.engine.opaque import open_cursor, seal_cursor
from plinth.errors import BadRequest
from plinth.storage.query import PageStart

CURSOR_VERSION = 1
#: The official CLI shows 50 items by default (``--max``) and prints its "more records" notice only
#: when a ``next`` link remains after them: a page of 50 makes that notice appear from the 51st item.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000


@dataclass(frozen=True, slots=True)
class Cursor:
    start: PageStart
    query: dict[str, Any] | None = None


def encode_cursor(key: bytes, context: str, start: PageStart, query: dict[str, Any] | None = None) -> str:
    """A cursor continuing after ``start`` in the collection at ``context`` (its link)."""
    body: dict[str, Any] = {"v": CURSOR_VERSION, "p": start.parent, "n": start.name}
    if start.sort_value is not None:
        body["s"] = start.sort_value
    if query is not None:
        body["q"] = query
    return seal_cursor(key, orjson.dumps(body), context)


def _holds_nul(value: Any) -> bool:
    """Whether any string in a decoded cursor holds U+0000, which no store can take.
    Iterative: a forged cursor may nest as deep as the decoder allows."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            todo += item.keys()
            todo += item.values()
        elif isinstance(item, list):
            todo += item
    return False


def decode_cursor(key: bytes, context: str, token: str) -> Cursor:
    """The cursor ``token`` for the collection at ``context``; 400 when it is not one of ours."""
    raw = open_cursor(key, token, context)
    if raw is None:
        raise BadRequest("The paging cursor is not valid", {"parameter": "cursor"})
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest("The paging cursor is not valid", {"parameter": "cursor"}) from exc
    if (
        not isinstance(body, dict)
        or body.get("v") != CURSOR_VERSION
        or not isinstance(body.get("p"), str)
        or not isinstance(body.get("n"), str)
        or isinstance(body.get("s"), dict | list)
        or not isinstance(body.get("q", {}), dict)
        or _holds_nul(body)
    ):
        raise BadRequest("The paging cursor is not valid", {"parameter": "cursor"})
    return Cursor(PageStart(body["p"], body["n"], body.get("s")), body.get("q"))


def page_size(raw: str | None) -> int:
    """The ``limit`` query parameter: 1..1000, default 50."""
    if raw is None or raw == "":
        return DEFAULT_PAGE_SIZE
    try:
        value = int(raw)
    except ValueError as exc:
        raise BadRequest("limit must be a whole number", {"parameter": "limit"}) from exc
    if not 1 <= value <= MAX_PAGE_SIZE:
        raise BadRequest(f"limit must be between 1 and {MAX_PAGE_SIZE}", {"parameter": "limit"})
    return value
