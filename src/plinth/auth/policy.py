"""Policy decisions: may this principal use this permission on this item? (docs.controlplane.com/reference/policy)

An action is allowed when some policy whose ``targetKind`` is the item's kind
1. covers the item: ``target: all``, the item's link in ``targetLinks``, or the item matching
   ``targetQuery`` (evaluated live, so it covers items created later); and
2. has a binding that grants the permission (directly or through a permission implying it) to
   the principal, or to a group the principal belongs to (by ``memberLinks``, or for users by
   ``memberQuery``, also evaluated live).

Deny is the default: :meth:`PolicySet.allowed` returns the first grant found, or ``None``.
A :class:`PolicySet` is built from one org's policies and groups and is immutable; callers
cache it and rebuild it when the org's authorization data changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from plinth.meta import parse_link

Item = dict[str, Any]
Matcher = Callable[[Any, Item], bool]
#: Returns the item a decision is about, read only when a ``targetQuery`` needs it.
Loader = Callable[[], Item | None]
MatchKind = Literal["link", "query", "all"]


@dataclass(frozen=True, slots=True)
class Grant:
    """Why a permission is held: which policy, through which principal link, matched how."""

    policy_link: str
    principal_link: str
    permissions: frozenset[str]
    match: MatchKind


@dataclass(frozen=True, slots=True)
class _Binding:
    principals: frozenset[str]
    permissions: frozenset[str]  # closed under implication
    declared: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Policy:
    link: str
    target_all: bool
    target_links: frozenset[str]
    target_query: Any
    bindings: tuple[_Binding, ...]


def close_permissions(declared: Iterable[str], implied: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """``declared`` plus everything they imply, transitively."""
    out: set[str] = set()
    todo = list(declared)
    while todo:
        perm = todo.pop()
        if perm not in out:
            out.add(perm)
            todo.extend(implied.get(perm, ()))
    return frozenset(out)


def _full(link: str, org: str) -> str | None:
    parsed = parse_link(link, org)
    return parsed.href if parsed is not None and parsed.org == org else None


class PolicySet:
    def __init__(
        self,
        org: str,
        policies: Iterable[Item],
        groups: Iterable[Item],
        implied: Mapping[str, Mapping[str, Iterable[str]]],
        matcher: Matcher,
    ):
        self.org = org
        self._matcher = matcher
        self._by_kind: dict[str, list[_Policy]] = {}
        for policy in policies:
            kind = policy.get("targetKind")
            if not isinstance(kind, str):
                continue
            kind_implied = implied.get(kind, {})
            bindings = tuple(
                _Binding(
                    frozenset(f for f in (_full(p, org) for p in b.get("principalLinks", [])) if f),
                    close_permissions(b.get("permissions", []), kind_implied),
                    tuple(b.get("permissions", [])),
                )
                for b in policy.get("bindings", [])
            )
            self._by_kind.setdefault(kind, []).append(
                _Policy(
                    link=f"/org/{org}/policy/{policy['name']}",
                    target_all=policy.get("target") == "all",
                    target_links=frozenset(f for f in (_full(t, org) for t in policy.get("targetLinks", [])) if f),
                    target_query=policy.get("targetQuery"),
                    bindings=bindings,
                )
            )
        self._groups = [
            (
                f"/org/{org}/group/{g['name']}",
                frozenset(f for f in (_full(m, org) for m in g.get("memberLinks", [])) if f),
                g.get("memberQuery"),
            )
            for g in groups
        ]

    def identities(self, principal_link: str, principal_item: Item | None) -> frozenset[str]:
        """The principal's own link plus the links of every group it belongs to."""
        out = {principal_link}
        is_user = "/user/" in principal_link
        for link, members, query in self._groups:
            if principal_link in members or (
                is_user and query is not None and principal_item is not None and self._matcher(query, principal_item)
            ):
                out.add(link)
        return frozenset(out)

    def _covers(self, policy: _Policy, href: str, load: Loader) -> MatchKind | None:
        if policy.target_all:
            return "all"
        if href in policy.target_links:
            return "link"
        if policy.target_query is not None:
            item = load()
            if item is not None and self._matcher(policy.target_query, item):
                return "query"
        return None

    def grants_everything(self, identities: frozenset[str], permission: str, kind: str) -> bool:
        """True when a ``target: all`` policy grants ``permission`` on ``kind`` (lists skip per-item checks)."""
        return any(
            policy.target_all
            and any(permission in b.permissions and b.principals & identities for b in policy.bindings)
            for policy in self._by_kind.get(kind, ())
        )

    def grants_any(self, identities: frozenset[str], permission: str, kind: str) -> bool:
        """True when some policy grants ``permission`` on some items of ``kind`` (a watch's right)."""
        return any(
            permission in b.permissions and b.principals & identities
            for policy in self._by_kind.get(kind, ())
            for b in policy.bindings
        )

    def allowed(
        self,
        identities: frozenset[str],
        permission: str,
        kind: str,
        href: str,
        load: Loader,
    ) -> Grant | None:
        for policy in self._by_kind.get(kind, ()):
            granting = [b for b in policy.bindings if permission in b.permissions and b.principals & identities]
            if not granting:
                continue
            match = self._covers(policy, href, load)
            if match is not None:
                principal = sorted(granting[0].principals & identities)[0]
                return Grant(policy.link, principal, granting[0].permissions, match)
        return None

    def grants_on(self, kind: str, href: str, load: Loader) -> list[tuple[Grant, tuple[str, ...]]]:
        """Every (principal, policy) grant on an item, with the permissions as declared (access reports)."""
        out: list[tuple[Grant, tuple[str, ...]]] = []
        for policy in self._by_kind.get(kind, ()):
            match = self._covers(policy, href, load)
            if match is None:
                continue
            for binding in policy.bindings:
                for principal in sorted(binding.principals):
                    out.append((Grant(policy.link, principal, binding.permissions, match), binding.declared))
        return out
