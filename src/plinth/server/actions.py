"""Actions and sub-resources, served from the kinds' declarations (``KindSpec.actions``).

A kind declares each endpoint it serves beyond its verbs once, as a
:class:`~plinth.kinds.base.KindAction`: the method, the path after the collection or item
(``-addKey``, ``-for/email/{email}``, ``deployment/{location}``), its handler, the body model
and the answer's. This module matches a parsed path against those declarations and calls the
declared handler with the engine's side of :class:`~plinth.kinds.actions.ActionContext`
(``engine/action_context.py``); it names no kind. The same declarations feed
``/openapi.json``, so what is documented is what is served.

The endpoints every kind has (``-query``, ``-eventlog``, ``-accessreport``,
``-schema/permissions``) are not declared per kind; ``server/routes.py`` serves them.
"""

from __future__ import annotations

import orjson

from plinth.engine.access import Access
from plinth.engine.action_context import EngineActionContext
from plinth.engine.requestinfo import RequestInfo
from plinth.errors import MethodNotAllowed
from plinth.kinds.base import KindAction, KindSpec
from plinth.server.http import Request
from plinth.server.reply import Reply, Services


def _params(action: KindAction, info: RequestInfo) -> dict[str, str] | None:
    """The path parameters when ``action``'s path is the one ``info`` names, else ``None``."""
    if action.on_item != info.is_item:
        return None
    head, *rest = action.path.split("/")
    if head.startswith("-") == info.sub or head.removeprefix("-") != info.action:
        return None
    if len(rest) != len(info.action_args):
        return None
    params: dict[str, str] = {}
    for declared, given in zip(rest, info.action_args, strict=True):
        if declared.startswith("{") and declared.endswith("}"):
            params[declared[1:-1]] = given
        elif declared != given:
            return None
    return params


def find(kind: KindSpec, info: RequestInfo, method: str) -> tuple[KindAction, dict[str, str]] | None:
    """The declared action this method and path call; ``None`` when no declaration has the
    path; 405 naming the declared methods when the path exists but not for this method."""
    methods: list[str] = []
    for action in kind.actions:
        params = _params(action, info)
        if params is None:
            continue
        if action.method == method:
            return action, params
        methods.append(action.method)
    if methods:
        raise MethodNotAllowed(f"This endpoint answers {' and '.join(methods)}", {"allow": ", ".join(methods)})
    return None


async def serve(
    svc: Services,
    action: KindAction,
    req: Request,
    info: RequestInfo,
    body: object,
    access: Access,
    params: dict[str, str],
) -> Reply:
    """Call the declared action's handler with the engine's side of the protocol, and answer
    what it answers (a JSON-able body is encoded here)."""
    ctx = EngineActionContext(
        svc.engine,
        info,
        access,
        params=params,
        body=body,
        request_id=req.request_id,
        param=req.param,
        signing=svc.signing.current,
    )
    answer = await action.handler(ctx)
    encoded = answer.body if isinstance(answer.body, bytes) else orjson.dumps(answer.body)
    return Reply(answer.status, encoded, [(k.encode(), v.encode()) for k, v in answer.headers])
