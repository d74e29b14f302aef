"""Dispatch a parsed API path to the engine, as the authenticated principal. Every kind in the
registry gets the same routes: a kind's ``verbs`` decide which answer 405, and its declared
actions and sub-resources (``KindSpec.actions``) are served by ``server/actions.py``, and the
few rules the server applies for some kinds run through their guard (``server/guards.py``).
Authorization happens inside the engine, where the item is known."""

from __future__ import annotations

import orjson

from plinth.auth.principal import Principal
from plinth.engine import accessinfo, listing
from plinth.engine.access import Access, OwnOrgOnly
from plinth.engine.paging import page_size
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import WriteResult
from plinth.errors import Forbidden, MethodNotAllowed, NotFound, Unauthorized
from plinth.kinds.base import KindSpec
from plinth.server import actions
from plinth.server.guards import GUARDS, KindGuard
from plinth.server.http import Request
from plinth.server.reply import Reply, Services

__all__ = ["Reply", "Services", "access_for", "allowed_methods", "dispatch"]

NO_GUARD = KindGuard()


#: Says what a write did (or, with ``dryRun``, would do): ``created``, ``updated`` or
#: ``unchanged``. The status alone cannot tell an update from a write that changed nothing.
OUTCOME_HEADER = b"x-plinth-outcome"


def _write_reply(result: WriteResult, dry_run: bool) -> Reply:
    headers = [(OUTCOME_HEADER, result.outcome.encode())] if result.outcome else []
    if dry_run:
        return Reply(200, result.doc, headers)
    if result.location:
        headers.append((b"location", result.location.encode()))
    return Reply(result.status, result.doc, headers)


async def access_for(svc: Services, who: Principal, info: RequestInfo) -> Access:
    """The caller's access in the path's org. A key of one org gets 401 in another: it proves
    nothing there, and the answer must not tell whether that org or its items exist."""
    org = info.org
    if org is not None and org != who.org and not who.server_admin:
        raise Unauthorized("The credentials are not valid")
    access = await svc.access.for_principal(who, org or who.org)
    if org is None and not who.server_admin:
        return OwnOrgOnly(access, who.org)
    return access


async def dispatch(svc: Services, req: Request, info: RequestInfo, body: object, who: Principal) -> Reply:
    access = await access_for(svc, who, info)
    guard = GUARDS.get(info.kind, NO_GUARD)
    await guard.before(svc, req, info, body, who)
    if info.action is None:
        reply = await _verb(svc, req, info, body, access)
    else:
        reply = await _action(svc, req, info, body, access)
    await guard.after(svc, req, info, reply)
    return reply


#: The methods of an item and of a collection, with the verb each needs (``KindSpec.access.verbs``).
ITEM_METHODS: dict[str, str] = {"GET": "get", "PUT": "replace", "PATCH": "patch", "DELETE": "delete"}
COLLECTION_METHODS: dict[str, str] = {"GET": "list", "POST": "create", "PUT": "replace"}
ORG_WIDE_METHODS: dict[str, str] = {"GET": "list"}


def _methods(kind: KindSpec, info: RequestInfo) -> dict[str, str]:
    """The method table of the path; a GVC-scoped kind's org-wide collection only lists."""
    if info.is_item:
        return ITEM_METHODS
    return ORG_WIDE_METHODS if kind.scope == "gvc" and info.gvc is None else COLLECTION_METHODS


def allowed_methods(kind: KindSpec, info: RequestInfo) -> tuple[str, ...]:
    """What the path answers for this kind, in the order of its table."""
    return tuple(method for method, verb in _methods(kind, info).items() if verb in kind.access.verbs)


def _check_method(svc: Services, req: Request, info: RequestInfo) -> None:
    kind = svc.engine.kinds.get(info.kind)
    if kind is None:
        return  # the engine answers 404 for an unknown kind
    if _methods(kind, info).get(req.method) in kind.access.verbs:
        return
    if kind.rules.create_refusal is not None and req.method == "POST" and not info.is_item:
        raise Forbidden(kind.rules.create_refusal, {"kind": kind.name})
    allowed = allowed_methods(kind, info)
    where = "an item" if info.is_item else "a collection"
    detail = {"allow": ", ".join(allowed)} if allowed else None
    raise MethodNotAllowed(f"{req.method} is not supported on {where} of kind '{kind.name}'", detail)


async def _verb(svc: Services, req: Request, info: RequestInfo, body: object, access: Access) -> Reply:
    _check_method(svc, req, info)
    engine, method, dry_run = svc.engine, req.method, req.flag("dryRun")
    if info.is_item:
        if method == "GET":
            return Reply(200, await engine.get(info, access))
        if method == "PUT":
            return _write_reply(await engine.upsert(info, body, access, dry_run), dry_run)
        if method == "PATCH":
            return _write_reply(await engine.patch(info, body, access, dry_run), dry_run)
        if method == "DELETE":
            await engine.delete(info, access, dry_run)
            return Reply(202, b"")
        raise MethodNotAllowed(f"{method} is not supported on an item", {"allow": "GET, PUT, PATCH, DELETE"})
    if method == "GET":
        limit = page_size(req.param("limit"))
        return Reply(200, await listing.list_items(engine, info, limit, req.param("cursor"), access))
    if method == "POST":
        return _write_reply(await engine.create(info, body, access, dry_run), dry_run)
    if method == "PUT":
        return _write_reply(await engine.upsert(info, body, access, dry_run), dry_run)
    raise MethodNotAllowed(f"{method} is not supported on a collection", {"allow": "GET, POST, PUT"})


async def _action(svc: Services, req: Request, info: RequestInfo, body: object, access: Access) -> Reply:
    engine, method = svc.engine, req.method
    limit = page_size(req.param("limit"))
    if not info.sub:
        generic = await _generic_action(svc, req, info, body, access, limit)
        if generic is not None:
            return generic
    kind = engine.kinds.get(info.kind)
    found = actions.find(kind, info, method) if kind is not None else None
    if found is None:
        raise NotFound(f"No API path matches '{req.path}'", {"path": req.path})
    declared, params = found
    return await actions.serve(svc, declared, req, info, body, access, params)


async def _generic_action(
    svc: Services, req: Request, info: RequestInfo, body: object, access: Access, limit: int
) -> Reply | None:
    """The endpoints every kind has; ``None`` when the path is none of them."""
    engine, method, action = svc.engine, req.method, info.action
    if action == "query" and not info.is_item and not info.action_args:
        _allow(method, "GET", "POST")
        if method == "POST" and body is None:
            body = {}  # no terms: `cpln <kind> query` without options POSTs no body at all
        return Reply(200, await listing.query_items(engine, info, body, limit, req.param("cursor"), access))
    if action == "eventlog" and info.is_item and not info.action_args:
        _allow(method, "GET")
        return Reply(200, await listing.event_log(engine, info, limit, req.param("cursor"), access))
    if action == "schema" and info.action_args == ("permissions",) and not info.is_item and info.org:
        _allow(method, "GET")
        return Reply(200, orjson.dumps(accessinfo.permissions_schema(info.kind, info.org)))
    if action == "accessreport" and info.is_item and not info.action_args and info.org:
        _allow(method, "GET")
        report = await accessinfo.access_report(engine, info, access, await svc.access.policy_set(info.org))
        return Reply(200, orjson.dumps(report))
    return None


def _allow(method: str, *allowed: str) -> None:
    if method not in allowed:
        raise MethodNotAllowed(f"This endpoint answers {' and '.join(allowed)}", {"allow": ", ".join(allowed)})
