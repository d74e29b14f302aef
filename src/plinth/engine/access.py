"""Authorization as the engine sees it: an :class:`Access` answers "may the caller use this
permission on this item?", and :class:`AccessControl` builds one per request from the org's
policies and groups (``auth/policy.py``), cached until the access generation moves.

Deny is the default. The engine asks at the point where it knows the item: a read after it
loaded the record, a create once the candidate is built, an edit or delete on the stored item,
and a list once per row (or once per page when a ``target: all`` policy grants the view).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import orjson

from plinth.auth.generation import GenerationWatcher
from plinth.auth.policy import Item, PolicySet
from plinth.auth.principal import Principal
from plinth.engine.querywire import parse_query
from plinth.errors import APIError, Forbidden, not_found
from plinth.kinds import PERMISSIONS
from plinth.kinds.base import KindSpec
from plinth.storage import evaluate
from plinth.storage.base import Key, Storage
from plinth.storage.query import Filter, ListRequest
from plinth.storage.scan import every_record

Loader = Callable[[], Item | None]
#: What a decision is made on: the stored item's ``(id, version)``, which changes with its
#: content (and its id when it is made again under the same name); ``None`` for an item that
#: is not stored as such (a create's candidate, a deleted item): never cached.
Stamp = tuple[str, int] | None
DECISIONS_PER_PRINCIPAL = 50_000


def stamp_of(record: Any) -> Stamp:
    """The stamp of a stored record (``None`` when there is none)."""
    return (record.id, record.version) if record is not None else None


class Access(Protocol):
    """What the engine asks before it acts. ``stamp`` keys the decision cache: a decision
    that depended on the item's content is re-made when the item changes."""

    principal_link: str

    def allows(self, kind: KindSpec, permission: str, href: str, stamp: Stamp, load: Loader) -> bool: ...

    def sees_every(self, kind: KindSpec, permission: str) -> bool: ...

    def holds_any(self, kind: KindSpec, permission: str) -> bool:
        """Whether some policy grants ``permission`` on some items of ``kind`` (a watch needs
        ``view`` so; it ends with 403 when a policy change takes the last grant away)."""
        ...


def require(
    access: Access,
    kind: KindSpec,
    permission: str,
    href: str,
    stamp: Stamp,
    load: Loader,
    *,
    visible: bool | None = None,
) -> None:
    """Raise unless ``access`` allows ``permission`` on the item at ``href``: 403 naming the
    missing permission when the caller may view the item (or creates it), else the same 404 a
    missing item answers, so a caller learns nothing of items it may not view (docs/api.md,
    "Errors": existence is not disclosed).

    ``visible`` says the caller is known to see the item (a write's later checks, once the
    stored item passed ``edit``, judge a candidate that must not decide what the caller sees);
    ``None`` asks ``view`` on the item ``load`` gives."""
    if access.allows(kind, permission, href, stamp, load):
        return
    name = href.rsplit("/", 1)[-1]
    judged = permission != "create" and visible is not True
    if judged and (permission == "view" or not access.allows(kind, "view", href, stamp, load)):
        raise not_found(kind.name, name)
    raise Forbidden(
        f"Permission '{permission}' on {kind.name} '{name}' is needed",
        {"permission": permission, "kind": kind.name, "link": href},
    )


class Unrestricted:
    """The server itself, and the server-admin principal: every permission everywhere."""

    def __init__(self, principal_link: str):
        self.principal_link = principal_link

    def allows(self, kind: KindSpec, permission: str, href: str, stamp: Stamp, load: Loader) -> bool:
        return True

    def sees_every(self, kind: KindSpec, permission: str) -> bool:
        return True

    def holds_any(self, kind: KindSpec, permission: str) -> bool:
        return True


class PolicyAccess:
    def __init__(
        self, principal_link: str, identities: frozenset[str], policies: PolicySet, decisions: dict[Any, bool]
    ):
        self.principal_link = principal_link
        self._identities = identities
        self._policies = policies
        self._decisions = decisions

    def allows(self, kind: KindSpec, permission: str, href: str, stamp: Stamp, load: Loader) -> bool:
        if stamp is None:
            return self._policies.allowed(self._identities, permission, kind.name, href, load) is not None
        key = (permission, href, stamp)
        decided = self._decisions.get(key)
        if decided is None:
            decided = self._policies.allowed(self._identities, permission, kind.name, href, load) is not None
            if len(self._decisions) >= DECISIONS_PER_PRINCIPAL:
                self._decisions.clear()
            self._decisions[key] = decided
        return decided

    def sees_every(self, kind: KindSpec, permission: str) -> bool:
        return self._policies.grants_everything(self._identities, permission, kind.name)

    def holds_any(self, kind: KindSpec, permission: str) -> bool:
        return self._policies.grants_any(self._identities, permission, kind.name)


class AccessControl:
    """Per-process caches of policy sets, identities and decisions, dropped when the store's
    access generation moves (any write to a user, service account, group or policy)."""

    def __init__(self, storage: Storage, kinds: Mapping[str, KindSpec], watcher: GenerationWatcher):
        self._storage = storage
        self._kinds = kinds
        self._watcher = watcher
        self._generation: str | None = None
        self._sets: dict[str, PolicySet] = {}
        self._identities: dict[str, frozenset[str]] = {}
        self._decisions: dict[str, dict[Any, bool]] = {}
        self._filters: dict[str, Filter | None] = {}
        #: The server admins' access, one object each (their right does not hang on policies).
        self._unrestricted: dict[Principal, Unrestricted] = {}

    async def for_principal(self, principal: Principal, org: str) -> Access:
        if principal.server_admin:
            unrestricted = self._unrestricted.get(principal)
            if unrestricted is None:
                unrestricted = self._unrestricted[principal] = Unrestricted(principal.link)
            return unrestricted
        policies = await self.cached_policy_set(org)
        identities = self._identities.get(principal.link)
        if identities is None:
            user = await self._principal_item(principal)
            identities = self._identities[principal.link] = policies.identities(principal.link, user)
        decisions = self._decisions.setdefault(principal.link, {})
        return PolicyAccess(principal.link, identities, policies, decisions)

    async def cached_policy_set(self, org: str) -> PolicySet:
        """The org's policy set, as of the access generation last read (at most
        ``GenerationWatcher``'s interval old; :meth:`expire` makes the next call read it)."""
        return (await self.labelled_policy_set(org))[0]

    async def labelled_policy_set(self, org: str) -> tuple[PolicySet, str | None]:
        """:meth:`cached_policy_set`, and the access generation read before it was loaded: the
        set holds every change up to that generation (and maybe later ones), so when the store
        still shows it, the set is the store's."""
        generation = await self._watcher.current()
        if generation != self._generation:
            self._sets.clear()
            self._identities.clear()
            self._decisions.clear()
            self._filters.clear()
            self._generation = generation
        policies = self._sets.get(org)
        if policies is None:
            policies = await self._load(org)
            if self._generation == generation:  # not moved on while this one loaded
                self._sets[org] = policies
        return policies, generation

    async def generation_now(self) -> str | None:
        """The access generation as the store holds it now (one read; later calls within the
        watcher's interval reuse it)."""
        self._watcher.expire()
        return await self._watcher.current()

    def expire(self) -> None:
        """Read the access generation again on the next call (this process changed it)."""
        self._watcher.expire()

    async def policy_set(self, org: str) -> PolicySet:
        """The org's current policy set (for access reports)."""
        return await self._load(org)

    async def _principal_item(self, principal: Principal) -> Item | None:
        if principal.kind != "user":
            return None
        record = await self._storage.get(Key(principal.org, "user", "", principal.name))
        return orjson.loads(record.doc) if record else None

    async def _all(self, org: str, kind: str) -> list[Item]:
        return [orjson.loads(r.doc) for r in await every_record(self._storage, ListRequest(org, kind, "", 1000))]

    async def _load(self, org: str) -> PolicySet:
        implied = {kind: entry.implied for kind, entry in PERMISSIONS.items()}
        return PolicySet(org, await self._all(org, "policy"), await self._all(org, "group"), implied, self._matches)

    def _matches(self, query: Any, item: Item) -> bool:
        """A policy's ``targetQuery`` or a group's ``memberQuery`` against an item."""
        cache_key = orjson.dumps([item.get("kind"), query], option=orjson.OPT_SORT_KEYS).decode()
        if cache_key not in self._filters:
            kind = self._kinds.get(str(item.get("kind")))
            try:
                self._filters[cache_key] = parse_query(kind, query)[0] if kind else None
            except APIError:
                self._filters[cache_key] = None  # a query that cannot run matches nothing
        flt = self._filters[cache_key]
        return flt is not None and evaluate.matches(flt, item, item.get("gvc") or "")


class OwnOrgOnly:
    """Lists of orgs for a principal without the server-admin right: only its own org."""

    def __init__(self, inner: Access, org: str):
        self._inner = inner
        self._href = f"/org/{org}"
        self.principal_link = inner.principal_link

    def allows(self, kind: KindSpec, permission: str, href: str, stamp: Stamp, load: Loader) -> bool:
        if kind.scope == "root" and href != self._href:
            return False
        return self._inner.allows(kind, permission, href, stamp, load)

    def sees_every(self, kind: KindSpec, permission: str) -> bool:
        return kind.scope != "root" and self._inner.sees_every(kind, permission)

    def holds_any(self, kind: KindSpec, permission: str) -> bool:
        return self._inner.holds_any(kind, permission)
