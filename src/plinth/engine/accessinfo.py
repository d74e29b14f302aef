"""What every kind answers about access: ``-schema/permissions`` (the permissions a policy on the
kind may grant) and ``-accessreport`` (who holds which of them on an item, and through which
policy). Neither names a kind; ``server/routes.py`` serves both for every kind."""

from __future__ import annotations

from typing import Any

import orjson

from plinth.auth.policy import PolicySet
from plinth.engine.access import Access, require, stamp_of
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.errors import NotFound, not_found
from plinth.kinds import PERMISSIONS


def permissions_schema(kind: str, org: str) -> dict[str, Any]:
    """``GET /org/{org}/{kind}/-schema/permissions`` for any kind a policy may target."""
    entry = PERMISSIONS.get(kind)
    if entry is None:
        raise NotFound(f"Kind '{kind}' has no permissions", {"kind": kind})
    implied = {perm: list(implies) for perm, implies in entry.implied.items()}
    if "manage" in implied and "manage" not in implied["manage"]:
        implied["manage"] = [*implied["manage"], "manage"]
    return {
        "kind": "permissions",
        "targetKind": kind,
        "items": [{"name": name, "description": description} for name, description in entry.permissions.items()],
        "implied": implied,
        "links": [{"rel": "self", "href": f"/org/{org}/{kind}/-schema/permissions"}],
    }


async def access_report(engine: Engine, info: RequestInfo, access: Access, policies: PolicySet) -> dict[str, Any]:
    """Who holds which permission on an item, and through which policy (docs.controlplane.com/reference/policy)."""
    t = engine.target(info)
    record = await engine.storage.get(t.key)
    if record is None:
        raise not_found(t.kind.name, t.name)
    item = orjson.loads(record.doc)
    require(access, t.kind, "view", t.href, stamp_of(record), lambda: item)
    grants = policies.grants_on(t.kind.name, t.href, lambda: item)
    entry = PERMISSIONS.get(t.kind.name)
    permissions = []
    for perm, description in entry.permissions.items() if entry else ():
        bindings = [
            {
                "principalLink": grant.principal_link,
                "grantingPolicyLink": grant.policy_link,
                "grantedPermissions": list(declared),
                "match": grant.match,
            }
            for grant, declared in grants
            if perm in grant.permissions
        ]
        permissions.append({"name": perm, "description": description, "bindings": bindings})
    return {
        "kind": "accessreport",
        "permissions": permissions,
        "created": engine.clock(),
        "links": [{"rel": "self", "href": f"{t.href}/-accessreport"}],
    }
