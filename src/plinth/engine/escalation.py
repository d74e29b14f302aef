"""The escalation rule: a write may not confer a grant its writer could not use itself.

With ``edit`` on one policy, a principal could retarget it (``targetKind: policy``, ``target:
all``), grant itself ``manage`` on every policy, then on service accounts, and mint keys: any
right to write a policy was the right to every permission of the org. The rule, after the
Kubernetes RBAC one ("privilege escalation prevention": a role may be written only by whom holds
every permission in it, unless it holds ``escalate``; a binding only by whom holds them, unless
it holds ``bind``; https://kubernetes.io/docs/reference/access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping):

- a group passes the grants policies give it on to its members: a write that adds a member
  (a member link, or a new ``memberQuery``/``identityMatcher``, which may match anyone) needs
  every grant the group holds, as a policy granting them to that member would;
- the same holds the other way round: a write of a principal (a user's tags) that makes it
  match a group's ``memberQuery`` it did not match before (``KindSpec.access.member_query``) joins
  that group, and needs every grant the group holds, unless the writer holds ``manage`` on
  every group;
- policies may name a principal before it exists: creating a principal (a service account)
  that policies name takes what they grant it, and needs it too, unless the writer holds
  ``manage`` on every policy;
- a write of an item whose kind declares ``confers`` (a policy) is judged on its result: every
  grant the new item confers that the stored one did not (a new principal, a new permission, a
  target the old one did not cover: a retargeted policy confers everything anew) must be one
  its writer holds: the same permission on the items of that kind the target covers;
- ``target: all`` and ``targetQuery`` cover items made later, so granting on them needs the
  permission on every item of the kind (a ``target: all`` grant); ``targetLinks`` need it on
  each item linked;
- holding ``manage`` on every item of the kind written (a ``target: all`` grant) is the
  ``escalate``-like right: it may confer anything. ``manage`` on one policy is not (its holder
  could retarget that policy to every policy), nor ``manage`` on one group (its holder could
  join it). ``manage`` on every policy (or every group) is therefore an org administrator's
  right, as the built-in ``superusers`` hold it; give it to no one you would not make one.

Grants the stored item confers already are not judged again: a principal may rename, retag,
describe, narrow or remove what it could not have granted. Unrestricted callers (the server,
the server admin) are not judged. The answer to a refused write is 403 naming the first grant
it may not confer. docs/api.md ("Writing policies: the escalation rule") is the user's page.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from plinth.engine.access import Access, Unrestricted
from plinth.engine.querywire import parse_query
from plinth.errors import APIError, Forbidden
from plinth.kinds.base import Conferred, Item, KindSpec
from plinth.meta import item_href, parse_link
from plinth.storage import evaluate
from plinth.storage.base import Key, Record, Storage
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

#: The permission that lets its holder write an item conferring grants it does not hold.
ESCALATE = "manage"
#: Policies read a page at a time when a group gains a member.
PAGE = 500


def new_grants(kind: KindSpec, candidate: Item, old: Item | None, org: str) -> list[Conferred]:
    """The grants ``candidate`` confers that ``old`` did not (a grant on ``all`` covers the same
    grant on any target), in a stable order."""
    assert kind.access.confers is not None
    before = kind.access.confers(old, org) if old is not None else frozenset()
    held_on_all = {(c.principal, c.permission, c.kind) for c in before if c.target == ("all",)}
    fresh = [
        c
        for c in kind.access.confers(candidate, org)
        if c not in before and (c.principal, c.permission, c.kind) not in held_on_all
    ]
    return sorted(fresh, key=lambda c: (c.kind, c.target, c.permission, c.principal))


def new_members(kind: KindSpec, candidate: Item, old: Item | None, org: str) -> frozenset[str]:
    """What makes a principal a member of ``candidate`` that did not of ``old``."""
    assert kind.access.members is not None
    return kind.access.members(candidate, org) - (kind.access.members(old, org) if old is not None else frozenset())


async def _held_by(storage: Storage, kinds: Mapping[str, KindSpec], href: str, org: str) -> list[Conferred]:
    """Every grant the org's items confer on the principal ``href`` (a group): what a new member gets."""
    out: set[Conferred] = set()
    for kind in kinds.values():
        if kind.access.confers is None:
            continue
        for record in await every_record(storage, ListRequest(org, kind.name, "", PAGE)):
            out.update(c for c in kind.access.confers(orjson.loads(record.doc), org) if c.principal == href)
    return sorted(out, key=lambda c: (c.kind, c.target, c.permission, c.principal))


async def _joined_by_query(
    storage: Storage,
    kinds: Mapping[str, KindSpec],
    access: Access,
    kind: KindSpec,
    org: str,
    candidate: Item,
    old: Item | None,
) -> list[str]:
    """The groups (any kind declaring ``member_query``) whose query the written principal
    matches now and did not before: it joins them, and gets their grants. Groups of a kind the
    writer holds ``manage`` on entirely are left out (the escalate-like right)."""
    out: list[str] = []
    for group_kind in kinds.values():
        if group_kind.access.member_query is None or access.sees_every(group_kind, ESCALATE):
            continue
        for record in await every_record(storage, ListRequest(org, group_kind.name, "", PAGE)):
            group = orjson.loads(record.doc)
            query = group_kind.access.member_query(group, kind.name)
            if query is None or not _matches(kind, query, candidate):
                continue
            if old is None or not _matches(kind, query, old):
                out.append(item_href(org, group_kind.name, str(group["name"])))
    return out


def _matches(kind: KindSpec, query: object, item: Item) -> bool:
    """As ``engine/access.py`` matches a ``memberQuery``: a query that cannot run matches nothing."""
    try:
        flt = parse_query(kind, query)[0]
    except APIError:
        return False
    return evaluate.matches(flt, item, item.get("gvc") or "")


def _key(href: str, org: str) -> Key | None:
    link = parse_link(href, org)
    if link is None:
        return None
    if link.kind == "org":
        return Key("", "org", "", link.name)
    return Key(link.org, link.kind, link.gvc or "", link.name)


async def check(
    storage: Storage,
    kinds: Mapping[str, KindSpec],
    access: Access,
    kind: KindSpec,
    href: str,
    org: str,
    candidate: Item,
    old: Item | None,
    old_record: Record | None,
) -> None:
    """Raise 403 unless ``access`` may confer every grant the write adds (module docstring)."""
    if isinstance(access, Unrestricted):
        return
    fresh = new_grants(kind, candidate, old, org) if kind.access.confers is not None else []
    if kind.access.members is not None and new_members(kind, candidate, old, org):
        fresh += await _held_by(storage, kinds, href, org)
    # On every item of the kind, not on the one written: manage on a single policy would let its
    # holder retarget that policy to every policy, then grant itself anything.
    if fresh and access.sees_every(kind, ESCALATE):
        fresh = []
    if old is None and kind.access.affects_access and kind.access.confers is None and kind.access.members is None:
        # Policies may name a principal before it exists: making it is taking what they grant
        # it (a service account a policy names, then a key added to it). Lifted by manage on
        # every item of a kind that confers grants (every policy), which may grant anything.
        named = await _held_by(storage, kinds, href, org)
        if named and not any(k.access.confers is not None and access.sees_every(k, ESCALATE) for k in kinds.values()):
            fresh += named
    joined = (
        await _joined_by_query(storage, kinds, access, kind, org, candidate, old) if kind.access.affects_access else []
    )
    for group in joined:
        fresh += await _held_by(storage, kinds, group, org)
    if not fresh:
        return
    items: dict[str, Item | None] = {}
    for grant in fresh:
        target_kind = kinds.get(grant.kind) or KindSpec(name=grant.kind, scope="org")
        if grant.target[0] == "link":
            linked = grant.target[1]
            if linked not in items:
                key = _key(linked, org)
                record = await storage.get(key) if key is not None else None
                items[linked] = orjson.loads(record.doc) if record is not None else None
            held = access.allows(target_kind, grant.permission, linked, None, lambda i=items[linked]: i)  # type: ignore[misc]
        else:
            held = access.sees_every(target_kind, grant.permission)
        if not held:
            granting = " or ".join(sorted(k.name for k in kinds.values() if k.access.confers is not None))
            raise _refused(kind, grant, href, granting or kind.name)


def _refused(kind: KindSpec, grant: Conferred, href: str, granting: str) -> Forbidden:
    """403 naming the first grant the write may not confer. ``granting``: the kinds whose items
    confer grants (the escalate-like right over a principal's pending grants)."""
    where = {
        "all": f"every {grant.kind}",
        "query": f"the {grant.kind} items a query matches (now and later: every {grant.kind})",
        "link": grant.target[-1],
    }[grant.target[0]]
    over = kind.name
    if grant.principal == href and kind.access.members is None:
        what = f"This {kind.name} would get '{grant.permission}' on {where}, which {granting} items grant it already"
        over = granting
    elif grant.principal == href:
        what = f"A new member of this {kind.name} would get '{grant.permission}' on {where}, which it holds"
    elif kind.access.confers is None:  # a principal that a group's query would now match
        what = f"This {kind.name} would join {grant.principal}, which holds '{grant.permission}' on {where}"
        joined = parse_link(grant.principal, "")
        over = joined.kind if joined is not None else over
    else:
        what = f"This {kind.name} would grant '{grant.permission}' on {where} to {grant.principal}"
    return Forbidden(
        f"{what}, a permission you do not hold there: you may grant only what you hold, unless you hold "
        f"'{ESCALATE}' on every {over}",
        {
            "permission": grant.permission,
            "kind": grant.kind,
            "target": grant.target[-1] if grant.target[0] != "all" else "all",
            "principal": grant.principal,
        },
    )
