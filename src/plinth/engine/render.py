"""What the server adds to an item: identity, timestamps, the envelope (its ``links`` from
``engine/address.py``), and the event of a change."""

from __future__ import annotations

import uuid
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


def new_id() -> str:
    return str(uuid.uuid4())


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
    event_id = new_id()
    doc = {
        "id": event_id,
        "kind": "event",
        "created": when,
        "lastEventTime": when,
        "eventCount": 1,
        "status": action,
        "pinned": False,
        "context": {"category": "resource", "link": href, "version": version, "principalLink": actor},
    }
    return event_id, orjson.dumps(doc)
