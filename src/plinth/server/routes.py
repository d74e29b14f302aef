"""Dispatch a parsed API path to the engine. There is no per-kind code here: every kind in the
registry gets the same routes, and a kind's ``verbs`` decide which answer 405."""

from __future__ import annotations

from dataclasses import dataclass, field

from plinth.auth.principal import Principal
from plinth.engine import listing
from plinth.engine.paging import page_size
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine, WriteResult
from plinth.errors import Forbidden, MethodNotAllowed, NotFound
from plinth.server.http import Request


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    content_type: bytes = b"application/json"


def _write_reply(result: WriteResult, dry_run: bool) -> Reply:
    if dry_run:
        return Reply(200, result.doc)
    headers = [(b"location", result.location.encode())] if result.location else []
    return Reply(result.status, result.doc, headers)


async def dispatch(engine: Engine, req: Request, info: RequestInfo, body: object, who: Principal) -> Reply:
    method = req.method
    dry_run = req.flag("dryRun")
    actor = who.link
    if info.kind == "org" and method in ("POST", "PUT") and not who.server_admin:
        raise Forbidden("Creating or replacing an org needs the server-admin right", {"permission": "org.create"})
    if info.action is None:
        if info.is_item:
            if method == "GET":
                return Reply(200, await engine.get(info))
            if method == "PUT":
                return _write_reply(await engine.upsert(info, body, actor, dry_run), dry_run)
            if method == "PATCH":
                return _write_reply(await engine.patch(info, body, actor, dry_run), dry_run)
            if method == "DELETE":
                await engine.delete(info, actor, dry_run)
                return Reply(202, b"")
            raise MethodNotAllowed(f"{method} is not supported on an item", {"allow": "GET, PUT, PATCH, DELETE"})
        if method == "GET":
            return Reply(
                200, await listing.list_items(engine, info, page_size(req.param("limit")), req.param("cursor"))
            )
        if method == "POST":
            return _write_reply(await engine.create(info, body, actor, dry_run), dry_run)
        if method == "PUT":
            return _write_reply(await engine.upsert(info, body, actor, dry_run), dry_run)
        raise MethodNotAllowed(f"{method} is not supported on a collection", {"allow": "GET, POST, PUT"})
    if info.action == "query" and not info.is_item and not info.action_args:
        if method not in ("POST", "GET"):
            raise MethodNotAllowed("A query is POSTed (or continued with GET and a cursor)", {"allow": "GET, POST"})
        limit = page_size(req.param("limit"))
        return Reply(200, await listing.query_items(engine, info, body, limit, req.param("cursor")))
    if info.action == "eventlog" and info.is_item and not info.action_args:
        if method != "GET":
            raise MethodNotAllowed("The event log is read with GET", {"allow": "GET"})
        return Reply(200, await listing.event_log(engine, info, page_size(req.param("limit")), req.param("cursor")))
    raise NotFound(f"No API path matches '{req.path}'", {"path": req.path})
