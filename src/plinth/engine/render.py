"""What the server adds to an item: identity, timestamps, the envelope (its ``links`` from
``engine/address.py``), and the event of a change."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from typing import Any

import orjson

from plinth.engine.address import Address
from plinth.kinds.base import Item, KindSpec
from plinth.meta import SERVER_OWNED

#: Who the server's own writes are made by (the engine's ``SYSTEM`` principal, records it seeds).
SERVER_ACTOR = "/plinth/system"


def now_iso() -> str:
    """UTC with milliseconds and ``Z``: the form the official clients print and parse."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


#: Random bytes :func:`new_id` draws per system call: 256 ids.
_ID_BLOCK = 16 * 256
#: Each thread's block and how far it is used (``threading.local``); a forked child starts afresh.
_ids = threading.local()


def _forget_ids() -> None:
    global _ids
    _ids = threading.local()  # a child must never hand out the bytes its parent may use too


os.register_at_fork(after_in_child=_forget_ids)


def new_id() -> str:
    """A random UUID (version 4), as ``str(uuid.uuid4())`` makes, from the OS's CSPRNG.

    The bytes are drawn 256 ids at a time: one ``getrandom`` call per id was about 6% of a
    PATCH's time under load (docs/write-path.md). Per thread, and dropped in a forked child,
    so no two threads or processes hand out the same bytes."""
    state = _ids.__dict__
    block: bytes = state.get("block", b"")
    at: int = state.get("at", 0)
    if at >= len(block):
        block, at = os.urandom(_ID_BLOCK), 0
        state["block"] = block
    state["at"] = at + 16
    n = int.from_bytes(block[at : at + 16], "big")
    n = (n & ~(0xF000 << 64)) | (0x4000 << 64)  # version 4, as uuid.UUID(version=4) sets it
    n = (n & ~(0xC000 << 48)) | (0x8000 << 48)  # the RFC 4122 variant
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def client_view(kind: KindSpec, item: Item) -> Item:
    """The fields a client controls: what a no-op write is compared on, and what PATCH merges into."""
    owned = SERVER_OWNED | kind.schema.server_fields
    return {k: v for k, v in item.items() if k not in owned}


def finish_item(
    kind: KindSpec,
    candidate: Item,
    *,
    org: str,
    gvc: str | None,
    item_id: str,
    version: int,
    created: str,
    modified: str,
    status: dict[str, Any],
) -> Item:
    """The stored and served form, keys in the order the official API prints them."""
    out: Item = {"id": item_id, "name": candidate["name"], "kind": kind.name, "version": version}
    for key in ("description", "tags"):
        if key in candidate:
            out[key] = candidate[key]
    out["created"] = created
    out["lastModified"] = modified
    out["links"] = Address(kind, org, gvc, item_id if kind.schema.addressed_by_id else candidate["name"]).links()
    if kind.scope == "gvc":
        out["gvc"] = gvc
    for key, value in candidate.items():
        if key not in out and key not in ("spec", "gvc"):
            out[key] = value
    if "spec" in candidate:
        out["spec"] = candidate["spec"]
    out["status"] = status
    return out


def event_doc(action: str, href: str, version: int, actor: str, when: str) -> tuple[str, bytes]:
    """The event a write leaves in its item's log: ``(id, document)``."""
    context = {"category": "resource", "link": href, "version": version, "principalLink": actor}
    return event_record(action, context, when)


def event_record(status: str, context: dict[str, Any], when: str) -> tuple[str, bytes]:
    """One event of an item's log (``-eventlog``) with ``status`` and ``context``: ``(id, document)``."""
    event_id = new_id()
    doc = {
        "id": event_id,
        "kind": "event",
        "created": when,
        "lastEventTime": when,
        "eventCount": 1,
        "status": status,
        "pinned": False,
        "context": context,
    }
    return event_id, orjson.dumps(doc)
