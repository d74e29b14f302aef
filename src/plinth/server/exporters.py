"""The exporters ``/discovery`` names: GET ``{exporter}{selfLink}`` for an item or a collection.

``/export/terraform/...`` answers HCL as text; ``/export/crd/...`` answers the CRD object (a
``kind: list`` of them for a collection). Both read through the engine, so the caller sees only
what a GET would show, and translate through ``plinth.convert``, as ``plinth rest -o tf|crd`` does.
"""

from __future__ import annotations

from typing import Any

import orjson

from plinth.auth.principal import Principal
from plinth.convert import to_crd, to_terraform
from plinth.engine import listing
from plinth.engine.access import Access
from plinth.engine.paging import MAX_PAGE_SIZE
from plinth.engine.requestinfo import RequestInfo, parse_path
from plinth.engine.service import Engine
from plinth.errors import BadRequest, MethodNotAllowed, NotFound
from plinth.server.http import Request
from plinth.server.reply import Reply, Services
from plinth.server.routes import access_for

PREFIXES = {"/export/terraform": "terraform", "/export/crd": "crd"}
#: A collection export reads at most this many items (pages of MAX_PAGE_SIZE).
MAX_EXPORT_ITEMS = 10_000


def exporter_of(path: str) -> tuple[str, str] | None:
    """``(format, the API path)`` when ``path`` is an exporter path."""
    if not path.startswith("/export/"):
        return None  # every API request asks this: answer the common case at once
    for prefix, fmt in PREFIXES.items():
        if path.startswith(prefix + "/"):
            return fmt, path[len(prefix) :]
    return None


async def _collection(engine: Engine, info: RequestInfo, access: Access) -> dict[str, Any]:
    items: list[Any] = []
    cursor: str | None = None
    page: dict[str, Any] = {}
    while len(items) < MAX_EXPORT_ITEMS:
        page = orjson.loads(await listing.list_items(engine, info, MAX_PAGE_SIZE, cursor, access))
        items += page["items"]
        nxt = [link["href"] for link in page["links"] if link["rel"] == "next"]
        if not nxt:
            break
        cursor = nxt[0].split("cursor=", 1)[1]
    return {"kind": "list", "itemKind": page.get("itemKind"), "items": items}


async def export(svc: Services, req: Request, who: Principal, fmt: str, api_path: str) -> Reply:
    if req.method != "GET":
        raise MethodNotAllowed("Exporters answer GET", {"allow": "GET"})
    info = parse_path(api_path)
    if info.action is not None:
        raise NotFound(f"No export for '{api_path}'", {"path": api_path})
    access = await access_for(svc, who, info)
    engine = svc.engine
    doc = orjson.loads(await engine.get(info, access)) if info.is_item else await _collection(engine, info, access)
    if fmt == "terraform":
        try:
            text = to_terraform(doc)
        except ValueError as exc:
            raise BadRequest(f"No Terraform form for this item: {exc}") from exc
        return Reply(200, text.encode(), content_type=b"text/plain; charset=utf-8")
    org = info.org or info.name or ""
    return Reply(200, orjson.dumps(to_crd(doc, org)))
