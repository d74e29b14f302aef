"""Actions and sub-resources, served from the kinds' declarations (``KindSpec.actions``).

A kind declares each endpoint it serves beyond its verbs once, as a
:class:`~plinth.kinds.base.KindAction`: the method, the path after the collection or item
(``-addKey``, ``-for/email/{email}``, ``deployment/{location}``), the body model and the
answer. This module matches a parsed path against those declarations and calls the one
handler registered under the action's ``operation_id``. The same declarations feed
``/openapi.json``, and ``tests/server/test_actions.py`` checks that every declared action has
a handler and every handler a declaration, so what is documented is what is served.

The endpoints every kind has (``-query``, ``-eventlog``, ``-accessreport``,
``-schema/permissions``) are not declared per kind; ``server/routes.py`` serves them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson

from plinth.engine import cloudaccounts, identity, listing, sealed, users, workloads
from plinth.engine.access import Access
from plinth.engine.paging import page_size
from plinth.engine.requestinfo import RequestInfo
from plinth.errors import MethodNotAllowed, NotFound
from plinth.kinds.agent import agent_info
from plinth.kinds.base import KindAction, KindSpec
from plinth.kinds.secret.models import SECRET_TYPES
from plinth.server.http import Request
from plinth.server.reply import Reply, Services


@dataclass(frozen=True, slots=True)
class ActionCall:
    """One call of a declared action: the request, its parsed path, the decoded body, the
    caller's access, and the values of the ``{x}`` segments of the declared path."""

    req: Request
    info: RequestInfo
    body: object
    access: Access
    params: dict[str, str]


Handler = Callable[[Services, ActionCall], Awaitable[Reply]]


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


async def serve(svc: Services, action: KindAction, call: ActionCall) -> Reply:
    return await HANDLERS[action.operation_id](svc, call)


async def _add_key(svc: Services, call: ActionCall) -> Reply:
    minted = await identity.add_key(svc.engine, call.info, call.body, call.access, await svc.signing.current())
    return Reply(201, orjson.dumps(minted))


async def _invite(svc: Services, call: ActionCall) -> Reply:
    invited = await users.invite(svc.engine, call.info, call.body, call.access)
    return Reply(200, orjson.dumps(invited.body(call.req.request_id)))


async def _user_for_email(svc: Services, call: ActionCall) -> Reply:
    return Reply(200, await users.for_email(svc.engine, call.info, call.params["email"], call.access))


async def _deployments(svc: Services, call: ActionCall) -> Reply:
    return Reply(200, orjson.dumps(await workloads.deployments(svc.engine, call.info, call.access)))


async def _deployment(svc: Services, call: ActionCall) -> Reply:
    found = await workloads.deployment(svc.engine, call.info, call.params["location"], call.access)
    return Reply(200, orjson.dumps(found))


async def _run_command(svc: Services, call: ActionCall) -> Reply:
    command = await workloads.run_command(svc.engine, call.info, call.body, call.access)
    location = f"{workloads.commands_href(call.info)}/{command['id']}"
    return Reply(201, orjson.dumps(command), [(b"location", location.encode())])


async def _commands(svc: Services, call: ActionCall) -> Reply:
    limit = page_size(call.req.param("limit"))
    listed = await workloads.list_commands(svc.engine, call.info, limit, call.req.param("cursor"), call.access)
    return Reply(200, orjson.dumps(listed))


async def _command(svc: Services, call: ActionCall) -> Reply:
    return Reply(200, orjson.dumps(await workloads.get_command(svc.engine, call.info, call.params["id"], call.access)))


async def _reveal(svc: Services, call: ActionCall) -> Reply:
    return Reply(200, await sealed.reveal(svc.engine, call.info, call.access))


async def _secrets_for_type(svc: Services, call: ActionCall) -> Reply:
    """What ``-query`` answers for ``type = {type}``; an unknown type names nothing (404, naming
    the types), as an unknown provider's instructions do. The path is only in the CLI's map
    (CLI rest/map.js), with no stated meaning: this is Plinth's reading of it."""
    kind = call.params["type"]
    if kind not in SECRET_TYPES:
        raise NotFound(f"Unknown secret type '{kind}': one of {', '.join(SECRET_TYPES)}", {"type": kind})
    query = {"kind": "secret", "spec": {"match": "all", "terms": [{"op": "=", "property": "type", "value": kind}]}}
    limit = page_size(call.req.param("limit"))
    return Reply(200, await listing.query_items(svc.engine, call.info, query, limit, None, call.access))


async def _agent_info(svc: Services, call: ActionCall) -> Reply:
    item = RequestInfo(kind=call.info.kind, org=call.info.org, name=call.info.name)
    await svc.engine.get(item, call.access)  # 404 when there is none, 403 without view
    return Reply(200, orjson.dumps(agent_info()))


async def _instructions(svc: Services, call: ActionCall) -> Reply:
    return Reply(200, orjson.dumps(cloudaccounts.instructions(call.info.org or "", call.params["provider"])))


#: ``operation_id`` -> the handler that serves it.
HANDLERS: dict[str, Handler] = {
    "addServiceaccountKey": _add_key,
    "inviteUsers": _invite,
    "getUserForEmail": _user_for_email,
    "listWorkloadDeployments": _deployments,
    "getWorkloadDeployment": _deployment,
    "createWorkloadCommand": _run_command,
    "listWorkloadCommands": _commands,
    "getWorkloadCommand": _command,
    "revealSecret": _reveal,
    "listSecretsForType": _secrets_for_type,
    "getCloudaccountInstructions": _instructions,
    "getAgentInfo": _agent_info,
}
