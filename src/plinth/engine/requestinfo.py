"""Parse an API path once into a :class:`RequestInfo` (org, parent GVC, kind, name, action).

Shapes (docs/api.md, Paths and verbs)::

    /org                                   collection of orgs
    /org/{org}                             the org item
    /org/{org}/-{action}                   an action on the org (eventlog)
    /org/{org}/{kind}                      org-scoped collection; for GVC-scoped kinds, org-wide
    /org/{org}/{kind}/-{action}[/...]      collection action (query, schema/permissions)
    /org/{org}/org/-schema/permissions     the org kind's permissions (orgs do not nest otherwise)
    /org/{org}/{kind}/{name}[/-{action}]   item, item action
    /org/{org}/gvc/{gvc}[/-{action}]       a GVC (it is an org-scoped kind)
    /org/{org}/gvc/{gvc}/{kind}[/{name}][/-{action}]   GVC-scoped collection and items
    /org/{org}[/gvc/{gvc}]/{kind}/{name}/{sub}[/...]   an item's sub-resource (a workload's
                                           ``deployment``): ``action`` is ``sub``, ``sub`` is true
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from plinth.errors import NotFound, not_found
from plinth.meta import NAME_MAX, NAME_PATTERN


@dataclass(frozen=True, slots=True)
class RequestInfo:
    kind: str
    org: str | None = None
    gvc: str | None = None
    name: str | None = None
    #: ``query``, ``eventlog``, ``schema`` ... without the leading dash.
    action: str | None = None
    #: Path segments after the action (``-schema/permissions`` -> ``("permissions",)``).
    action_args: tuple[str, ...] = ()
    #: The action is a sub-resource of the item (``.../workload/{name}/deployment``): its
    #: segment has no leading dash. Kinds declare both in ``KindSpec.actions``.
    sub: bool = False

    @property
    def is_item(self) -> bool:
        return self.name is not None


def _unknown(path: str) -> NotFound:
    return NotFound(f"No API path matches '{path}'", {"path": path})


@functools.lru_cache(maxsize=1024)
def _can_exist(name: str) -> bool:
    return len(name) <= NAME_MAX and NAME_PATTERN.fullmatch(name) is not None


def _require_parent(kind: str, name: str) -> None:
    """An org or GVC in a parent position must have a valid name: no such item can exist
    otherwise, so anything under it is 404 (not, say, an empty list)."""
    if not _can_exist(name):
        raise not_found(kind, name)


def _split_action(segments: list[str]) -> tuple[list[str], str | None, tuple[str, ...]]:
    for i, seg in enumerate(segments):
        if seg.startswith("-") and len(seg) > 1:
            return segments[:i], seg[1:], tuple(segments[i + 1 :])
    return segments, None, ()


@functools.lru_cache(maxsize=10_000)
def parse_path(path: str) -> RequestInfo:
    """Raise :class:`NotFound` for a path no route serves. Answers are kept (they are immutable,
    and clients ask for the same paths again and again); a refused path is not."""
    raw = path
    if path.endswith("/") and len(path) > 1:
        path = path[:-1]
    segments = path.split("/")[1:]
    if not segments or segments[0] != "org" or any(s == "" for s in segments) or "\x00" in path:
        raise _unknown(raw)
    rest, action, args = _split_action(segments[1:])
    if not rest:
        if action is not None:
            raise _unknown(raw)
        return RequestInfo(kind="org")
    org = rest[0]
    rest = rest[1:]
    if not rest:
        return RequestInfo(kind="org", org=org, name=org, action=action, action_args=args)
    _require_parent("org", org)
    if rest[0] == "org":
        # Orgs are not nested in orgs. The one exception is the org kind's permission schema,
        # at the path every kind's is (policies may target the org).
        if len(rest) == 1 and action == "schema" and args == ("permissions",):
            return RequestInfo(kind="org", org=org, action=action, action_args=args)
        raise _unknown(raw)
    if rest[0] == "gvc" and len(rest) >= 2:
        gvc = rest[1]
        if len(rest) == 2:
            return RequestInfo(kind="gvc", org=org, name=gvc, action=action, action_args=args)
        _require_parent("gvc", gvc)
        if len(rest) == 3:
            return RequestInfo(kind=rest[2], org=org, gvc=gvc, action=action, action_args=args)
        if len(rest) == 4:
            return RequestInfo(kind=rest[2], org=org, gvc=gvc, name=rest[3], action=action, action_args=args)
        return _sub_resource(raw, rest[2:], action, org, gvc)
    if len(rest) == 1:
        return RequestInfo(kind=rest[0], org=org, action=action, action_args=args)
    if len(rest) == 2:
        return RequestInfo(kind=rest[0], org=org, name=rest[1], action=action, action_args=args)
    return _sub_resource(raw, rest, action, org, None)


def _sub_resource(raw: str, rest: list[str], action: str | None, org: str, gvc: str | None) -> RequestInfo:
    """``{kind}/{name}/{sub}[/...]``: a sub-resource of an item, never followed by an action."""
    if action is not None:
        raise _unknown(raw)
    kind, name, sub, *args = rest
    return RequestInfo(kind=kind, org=org, gvc=gvc, name=name, action=sub, action_args=tuple(args), sub=True)
