"""``POST /org/{org}/-runtime/access``: a data plane asks, with the user's own credentials,
whether they may use a permission on an item, and records what they do there (docs/api.md,
"Runtime access"; the engine side is ``engine/runtime_access.py``).

The caller was authenticated as every request is (a revoked key gets 401 here as anywhere), and
its access in the org is built the same way (``routes.access_for``: a key of another org gets
401). The answer is ``{"principal": link}``, or the API's usual error body.
"""

from __future__ import annotations

import orjson

from plinth.auth.principal import Principal
from plinth.engine.render import now_iso
from plinth.engine.runtime_access import check_access, parse_question
from plinth.errors import MethodNotAllowed
from plinth.server.http import Request
from plinth.server.reply import Reply, Services
from plinth.server.routes import access_for

PATH = "/org/{org}/-runtime/access"


async def serve(svc: Services, req: Request, org: str, body: object, who: Principal) -> Reply:
    if req.method != "POST":
        raise MethodNotAllowed("This endpoint answers POST", {"allow": "POST"})
    question, info = parse_question(body, org)
    access = await access_for(svc, who, info)
    await check_access(svc.engine, info, question, access, now_iso())
    return Reply(200, orjson.dumps({"principal": who.link}))
