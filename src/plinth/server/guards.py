"""Rules a few kinds need that the server, not the engine, must apply: what only the server
admin may do, and what follows a new org. Each kind with such rules has one :class:`KindGuard`
in :data:`GUARDS`; ``server/routes.py`` calls the guard of the path's kind, whatever the kind,
before and after every request it routes. They live here, not in the kind's declaration,
because they read server state (the server-admin right, the bootstrap's seeding) that kinds may
not see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson

from plinth.auth.authn import SERVER_ADMIN_META
from plinth.auth.principal import Principal
from plinth.engine.requestinfo import RequestInfo
from plinth.errors import Conflict, Forbidden
from plinth.server.bootstrap import seed_org
from plinth.server.http import Request
from plinth.server.reply import Reply, Services

Before = Callable[[Services, Request, RequestInfo, object, Principal], Awaitable[None]]
After = Callable[[Services, Request, RequestInfo, Reply], Awaitable[None]]


async def _nothing_before(svc: Services, req: Request, info: RequestInfo, body: object, who: Principal) -> None:
    return None


async def _nothing_after(svc: Services, req: Request, info: RequestInfo, reply: Reply) -> None:
    return None


@dataclass(frozen=True)
class KindGuard:
    """``before`` may refuse a request (raise); ``after`` acts on a successful answer."""

    before: Before = _nothing_before
    after: After = _nothing_after


async def _server_admin_account(svc: Services, req: Request, info: RequestInfo, body: object, who: Principal) -> None:
    """The service account holding the server-admin right is an org's item, but a key of it acts
    in every org: only the server admin may add or drop its keys or change it, and nobody may
    delete it (an account made again under its name would take the right over)."""
    if info.org is None:
        return
    name = info.name
    if name is None and req.method == "PUT" and isinstance(body, dict):
        name = body.get("name") if isinstance(body.get("name"), str) else None
    if name is None or req.method == "GET":
        return
    holder = await svc.engine.storage.get_meta(SERVER_ADMIN_META)
    if holder != f"/org/{info.org}/serviceaccount/{name}":
        return
    if not who.server_admin:
        raise Forbidden(
            "Only the server admin may change the service account holding the server-admin right",
            {"permission": "server-admin", "kind": "serviceaccount", "link": holder},
        )
    if req.method == "DELETE":
        raise Conflict(
            f"Service account '{name}' holds the server-admin right and cannot be deleted",
            {"kind": "serviceaccount", "name": name},
        )


async def _org_writes_need_the_server_admin(
    svc: Services, req: Request, info: RequestInfo, body: object, who: Principal
) -> None:
    if info.action is None and req.method in ("POST", "PUT") and not who.server_admin:
        raise Forbidden("Creating or replacing an org needs the server-admin right", {"permission": "org.create"})


async def _seed_new_org(svc: Services, req: Request, info: RequestInfo, reply: Reply) -> None:
    """A new org gets its built-in groups, policies and admin service account at once."""
    if info.action is None and req.method in ("POST", "PUT") and reply.status == 201:
        await seed_org(svc.engine, orjson.loads(reply.body)["name"])


#: Kind name -> its guard.
GUARDS: dict[str, KindGuard] = {
    "serviceaccount": KindGuard(before=_server_admin_account),
    "org": KindGuard(before=_org_writes_need_the_server_admin, after=_seed_new_org),
}
