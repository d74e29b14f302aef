"""First start and new orgs: the built-in groups and policies, the admin service account, its key.

On the first start with an empty store, exactly one process (replicas may race) claims the
bootstrap, creates the org named by ``--org`` with its built-ins and an ``admin`` service account
in ``superusers``, mints the admin key (printed once, written 0600 to the data dir) and records
``admin`` as the holder of the server-admin right (creating further orgs).

Every org gets the same built-ins: groups ``superusers`` and ``viewers``, and for every served
kind the policies ``superusers-{kind}`` (manage) and ``viewers-{kind}`` (view), ``target: all``.
Built-ins have ``origin: builtin``: none can be deleted, built-in policies cannot be edited.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from plinth.auth.authn import SERVER_ADMIN_META
from plinth.auth.signing import ensure_signing_key, load_key
from plinth.engine.identity import add_key
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import SYSTEM, Engine
from plinth.kinds.permissions import PERMISSIONS
from plinth.storage.base import SetMeta, Storage

CLAIM_META = "bootstrap.claim"
ORG_META = "bootstrap.org"
KEY_FILE = "bootstrap-admin.key"
ADMIN = "admin"
BUILTIN = {"origin": "builtin"}


async def seed_org(engine: Engine, org: str) -> None:
    """The built-ins of an org (idempotent: existing items are left as they are)."""
    sa = RequestInfo(kind="serviceaccount", org=org, name=ADMIN)
    await engine.upsert(sa, {"name": ADMIN, "description": "The org's first administrator"})
    groups = {"superusers": [f"/org/{org}/serviceaccount/{ADMIN}"], "viewers": []}
    for name, members in groups.items():
        info = RequestInfo(kind="group", org=org, name=name)
        await engine.upsert(info, {"name": name, "memberLinks": members}, system=BUILTIN)
    for kind in sorted(set(engine.kinds) & set(PERMISSIONS)):
        for group, permission in (("superusers", "manage"), ("viewers", "view")):
            name = f"{group}-{kind}"
            body = {
                "name": name,
                "description": f"Built-in: {permission} on every {kind} for {group}",
                "targetKind": kind,
                "target": "all",
                "bindings": [{"permissions": [permission], "principalLinks": [f"/org/{org}/group/{group}"]}],
            }
            await engine.upsert(RequestInfo(kind="policy", org=org, name=name), body, system=BUILTIN)


async def bootstrap(engine: Engine, storage: Storage, org: str) -> str | None:
    """Claim and perform the first start; returns the admin key to the process that did it."""
    token = secrets.token_hex(16)
    await storage.commit([SetMeta(CLAIM_META, token, only_if_absent=True)])
    if await storage.get_meta(CLAIM_META) != token:
        return None
    kid = await ensure_signing_key(storage)
    signing = await load_key(storage, kid)
    assert signing is not None
    await engine.upsert(RequestInfo(kind="org"), {"name": org})
    await seed_org(engine, org)
    minted = await add_key(
        engine,
        RequestInfo(kind="serviceaccount", org=org, name=ADMIN),
        {"description": "bootstrap admin key"},
        SYSTEM,
        signing,
    )
    await storage.commit([SetMeta(SERVER_ADMIN_META, f"/org/{org}/serviceaccount/{ADMIN}"), SetMeta(ORG_META, org)])
    return str(minted["key"])


def write_key_file(data_dir: Path, key: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    os.chmod(path, 0o600)
    return path
