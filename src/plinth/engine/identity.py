"""Identity and access endpoints that are not plain verbs: ``-addKey``, ``-schema/permissions``,
``-accessreport`` and the user lookup ``user/-for/email/{email}``. Each reads and writes through
the engine, so the same rules, events and access generation apply."""

from __future__ import annotations

from typing import Any

import orjson

from plinth.auth.policy import PolicySet
from plinth.auth.signing import SigningKey
from plinth.auth.tokens import mint, new_key_name
from plinth.engine.access import Access, Unrestricted, require, stamp_of
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.errors import NotFound, ValidationFailed, not_found
from plinth.kinds import PERMISSIONS
from plinth.kinds.serviceaccount import AddKeyRequest
from plinth.kinds.validation import validate_model


async def add_key(engine: Engine, info: RequestInfo, body: Any, access: Access, signing: SigningKey) -> dict[str, Any]:
    """Mint a key for a service account. The secret is in this answer only; the account lists
    the key's name, creation time and description."""
    t = engine.target(info)
    if t.kind.name != "serviceaccount":
        raise NotFound(f"-addKey is an action of service accounts, not of {t.kind.name}")
    fields, errors = validate_model(AddKeyRequest, body, "")
    if errors or fields is None:
        raise ValidationFailed(errors, "serviceaccount", t.name)
    record = await engine.storage.get(t.key)
    if record is None:
        raise not_found("serviceaccount", t.name)
    require(access, t.kind, "addKey", t.href, stamp_of(record), lambda: orjson.loads(record.doc))
    name = new_key_name()
    created = engine.clock()
    entry = {"name": name, "created": created, "description": fields["description"]}

    def keys_with_new(old: dict[str, Any] | None) -> dict[str, Any]:
        return {"keys": [*(old or {}).get("keys", []), entry]}

    # The addKey permission was checked above; the write itself is the server's, on the caller's behalf.
    await engine.patch(info, {}, Unrestricted(access.principal_link), system=keys_with_new)
    return {**entry, "key": mint(signing, t.org, t.name, name)}


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
