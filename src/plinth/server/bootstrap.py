"""First start and new orgs: the built-in groups and policies, the admin service account, its key.

On the first start with an empty store, exactly one process (replicas may race) claims the
bootstrap, creates the org named by ``--org`` with its built-ins and an ``admin`` service
account in ``superusers``, mints the admin key (printed once, written 0600 to the data dir) and
records ``admin`` as the holder of the server-admin right (creating further orgs). A claim left
by a process killed before it finished is taken over after :data:`CLAIM_LEASE_S`.

Every org gets the same built-ins: groups ``superusers`` and ``viewers``, for every served
kind the policies ``superusers-{kind}`` (manage) and ``viewers-{kind}`` (view), ``target: all``,
the audit context ``cpln`` (which receives the platform's own events on the hosted platform),
and the locations of the catalog (``kinds/location/catalog.py``). Built-ins have ``origin:
builtin``: none can be deleted, built-in policies and audit contexts cannot be edited. At every start
(:func:`ensure_builtins`) existing orgs get the policies and locations they lack (a kind, an audit context or a
catalog entry a newer server added); the policies and locations are created once and never
changed after, so a location a client disabled stays disabled.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plinth.auth.authn import SERVER_ADMIN_META
from plinth.auth.signing import SigningKey, check_current, ensure_signing_key, load_key, seal_clear_keys
from plinth.engine.action_context import EngineActionContext
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import SYSTEM, Engine
from plinth.files import private_dir
from plinth.kinds import PERMISSIONS
from plinth.kinds.auditctx import BUILTIN_CONTEXT
from plinth.kinds.location import BUILTIN_LOCATIONS, builtin_description
from plinth.kinds.serviceaccount import add_key
from plinth.storage.base import SetMeta, Storage
from plinth.storage.query import ListRequest
from plinth.storage.scan import pages

CLAIM_META = "bootstrap.claim"
#: Seconds after which a claim whose bootstrap never finished may be taken over.
CLAIM_LEASE_S = 60.0
ORG_META = "bootstrap.org"
KEY_FILE = "bootstrap-admin.key"
ADMIN = "admin"
BUILTIN = {"origin": "builtin"}
#: The fingerprint of the built-ins every org was last given (:func:`ensure_builtins`).
BUILTINS_META = "bootstrap.builtins"
ORGS_PAGE = 500


async def seed_org(engine: Engine, org: str) -> None:
    """The built-ins of a new org: the admin account, the groups, and :func:`seed_builtins`."""
    sa = RequestInfo(kind="serviceaccount", org=org, name=ADMIN)
    await engine.upsert(sa, {"name": ADMIN, "description": "The org's first administrator"})
    groups = {"superusers": [f"/org/{org}/serviceaccount/{ADMIN}"], "viewers": []}
    for name, members in groups.items():
        info = RequestInfo(kind="group", org=org, name=name)
        await engine.upsert(info, {"name": name, "memberLinks": members}, system=BUILTIN)
    await seed_builtins(engine, org)


def builtin_policies(engine: Engine, org: str) -> list[tuple[dict[str, Any], Mapping[str, Any]]]:
    """``superusers-{kind}`` (manage) and ``viewers-{kind}`` (view) for every served kind."""
    policies: list[tuple[dict[str, Any], Mapping[str, Any]]] = []
    for kind in sorted(set(engine.kinds) & set(PERMISSIONS)):
        for group, permission in (("superusers", "manage"), ("viewers", "view")):
            body = {
                "name": f"{group}-{kind}",
                "description": f"Built-in: {permission} on every {kind} for {group}",
                "targetKind": kind,
                "target": "all",
                "bindings": [{"permissions": [permission], "principalLinks": [f"/org/{org}/group/{group}"]}],
            }
            policies.append((body, BUILTIN))
    return policies


def builtin_locations() -> list[tuple[dict[str, Any], Mapping[str, Any]]]:
    """Every location of the catalog (``kinds/location/catalog.py``), enabled."""
    return [
        (
            {"name": entry.name, "description": builtin_description(entry), "spec": {"enabled": True}},
            {**BUILTIN, "provider": entry.provider, "region": entry.region},
        )
        for entry in BUILTIN_LOCATIONS.values()
    ]


async def seed_builtins(engine: Engine, org: str) -> None:
    """The built-in policies, audit context, locations and quotas an org lacks (each created once, never changed:
    a location a client disabled stays disabled), in one transaction per kind."""
    await engine.create_missing("policy", org, builtin_policies(engine, org))
    if "auditctx" in engine.kinds:
        context = {"name": BUILTIN_CONTEXT, "description": "Built-in: the platform's own audit events"}
        await engine.create_missing("auditctx", org, [(context, BUILTIN)])
    if "location" in engine.kinds:
        await engine.create_missing("location", org, builtin_locations())
    await engine.extensions.seed(org, engine.clock())  # the records extensions keep per org (quotas)


def builtins_fingerprint(engine: Engine) -> str:
    """What the built-ins :func:`seed_builtins` creates depend on: the served kinds, the catalog,
    and what the engine's extensions seed (their ``seed_basis``: the quota list)."""
    basis = [
        sorted(set(engine.kinds) & set(PERMISSIONS)),
        [tuple(e) for e in BUILTIN_LOCATIONS.values()],
        engine.extensions.seed_basis(),
    ]
    return hashlib.sha256(json.dumps(basis).encode()).hexdigest()


async def ensure_builtins(engine: Engine, storage: Storage) -> None:
    """At every start: give every org the built-ins a newer server has (a kind's policies, the
    catalog's locations). Cheap when nothing changed: one meta read, since the fingerprint of
    what was seeded last is stored (``BUILTINS_META``)."""
    fingerprint = builtins_fingerprint(engine)
    if await storage.get_meta(BUILTINS_META) == fingerprint:
        return
    async for page in pages(storage, ListRequest("", "org", "", ORGS_PAGE)):
        for record in page:
            await seed_builtins(engine, record.key.name)
    await storage.commit([SetMeta(BUILTINS_META, fingerprint)])


async def prepare_signing(engine: Engine, storage: Storage) -> None:
    """At every start: seal the signing keys a store from before sealing holds in the clear, and
    check that the current one opens (``auth.signing.SigningKeyError`` otherwise: this server
    was given another secrets key than the store's, or none)."""
    await seal_clear_keys(storage, engine.sealer)
    await check_current(storage, engine.sealer)


def _claimed_at(claim: str) -> float | None:
    """When a claim (``"<token> <unix time>"``) was made; ``None`` for one without a time."""
    _, _, at = claim.partition(" ")
    try:
        return float(at)
    except ValueError:
        return None


async def _claim(storage: Storage) -> bool:
    """Whether this process gets to bootstrap: it made the claim, or took over one whose
    claimer has not finished within :data:`CLAIM_LEASE_S` (it was killed: a claimer that
    finishes records ``ORG_META``, and its work takes well under a second)."""
    mine = f"{secrets.token_hex(16)} {time.time():.3f}"
    await storage.commit([SetMeta(CLAIM_META, mine, only_if_absent=True)])
    held = await storage.get_meta(CLAIM_META)
    if held == mine:
        return True
    if held is None or await storage.get_meta(ORG_META) is not None:
        return False
    claimed_at = _claimed_at(held)
    if claimed_at is not None and time.time() - claimed_at < CLAIM_LEASE_S:
        return False  # another process may be bootstrapping right now
    await storage.commit([SetMeta(CLAIM_META, mine, replacing=held)])  # one of the racers wins
    return await storage.get_meta(CLAIM_META) == mine


async def bootstrap(engine: Engine, storage: Storage, org: str) -> str | None:
    """Claim and perform the first start; returns the admin key to the process that did it.

    Every step after the claim is idempotent, so a process that takes over the claim of one
    killed half-way simply does them all again (the dead one's admin key, never shown, stays
    listed on the admin account)."""
    if not await _claim(storage):
        return None
    kid = await ensure_signing_key(storage, engine.sealer)
    signing = await load_key(storage, engine.sealer, kid)
    assert signing is not None
    await engine.upsert(RequestInfo(kind="org"), {"name": org})
    await seed_org(engine, org)

    async def current() -> SigningKey:
        return signing

    account = RequestInfo(kind="serviceaccount", org=org, name=ADMIN)
    body = {"description": "bootstrap admin key"}
    minted = (await add_key(EngineActionContext(engine, account, SYSTEM, body=body, signing=current))).body
    await storage.commit([SetMeta(SERVER_ADMIN_META, f"/org/{org}/serviceaccount/{ADMIN}"), SetMeta(ORG_META, org)])
    return str(minted["key"])


def write_key_file(data_dir: Path, key: str) -> Path:
    private_dir(data_dir, tighten_existing=True)
    path = data_dir / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    os.chmod(path, 0o600)
    return path
