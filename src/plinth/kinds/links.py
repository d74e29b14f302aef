"""Links between items, as every kind that holds links reads them: which item a link names,
when two links name the same item, and what a well-formed link of this org may still get wrong.

Used by the user, group and policy kinds and by the engine's PATCH (``$drop`` of a link):

- :func:`canonical_link` is the one identity of a link: the full ``/org/...`` form with a
  user's email lowercased; :func:`names_item` and :func:`link_kind` read a link in either form;
- a user's name is its email address in lowercase (types-ts user.ts: member and principal links
  are ``/org/{org}/user/{email}``, built by the CLI from the email); :func:`user_name_problem`
  is the one rule for a user's name, its ``email`` and the name in a user link;
- :func:`normalise_links` lowercases the email in user links and keeps each linked item once
  (short and full forms of one link are the same item), so ``$append/memberLinks`` of a
  member who is already there changes nothing, and a client that resends a link it already
  holds is not refused;
- :func:`link_problem` checks what the engine's reference check does not: a user link names
  an email, a link to a GVC-scoped kind names its GVC, a link to any other kind does not.
  Malformed links, links into another org and links to the wrong kind are left to the
  engine's reference check, which names them. :data:`GVC_SCOPED_KINDS` says which kinds
  a link must reach through their GVC.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from plinth.kindfacts import GVC_SCOPED
from plinth.kinds.base import ReadsPlacements, ReadsSelected, StatusDependency
from plinth.meta import parse_link

USER_EMAIL_MAX = 254
USER_LOCAL_MAX = 64
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
# Starts with a letter, digit or '_': a path segment starting with '-' would read as an action.
_USER_EMAIL = re.compile(rf"^[a-z0-9_][a-z0-9._+'-]*@(?:{_LABEL}\.)+{_LABEL}$")

#: Kinds that live inside a GVC (``/org/{org}/gvc/{gvc}/{kind}/{name}``): read from the table
#: generated from the kinds (``plinth.kindfacts``), since this module is imported by the kinds
#: before the registry exists; ``tests/kinds/test_facts.py`` keeps the table fresh.
GVC_SCOPED_KINDS: frozenset[str] = GVC_SCOPED


def user_name_problem(value: str) -> str | None:
    """Why ``value`` cannot name a user (a lowercase email address), or ``None``."""
    if len(value) > USER_EMAIL_MAX:
        return f"must be at most {USER_EMAIL_MAX} characters"
    if not _USER_EMAIL.match(value):
        if _USER_EMAIL.match(value.lower()):
            return "must be in lowercase"
        return "must be an email address in lowercase (name@domain.tld)"
    if len(value.split("@", 1)[0]) > USER_LOCAL_MAX:
        return f"must have at most {USER_LOCAL_MAX} characters before '@'"
    return None


def link_kind(link: str, org: str) -> str | None:
    """The kind a link points at, or ``None`` when it is malformed."""
    parsed = parse_link(link, org)
    return parsed.kind if parsed is not None else None


def canonical_link(link: str, org: str) -> str | None:
    """The full form of a link of ``org``, a user's email lowercased; ``None`` when malformed.
    Two links name the same item exactly when their canonical forms are equal."""
    parsed = parse_link(link, org)
    if parsed is None:
        return None
    return _lower_user(parsed.href, org)


def _lower_user(link: str, org: str) -> str:
    parsed = parse_link(link, org)
    if parsed is None or parsed.kind != "user" or parsed.name == parsed.name.lower():
        return link
    # The name is the last segment in both link forms; keep the form the client chose.
    return link[: len(link) - len(parsed.name)] + parsed.name.lower()


def normalise_links(links: Iterable[str], org: str) -> list[str]:
    """``links`` with user emails lowercased and each linked item kept once, first one wins."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in links:
        link = _lower_user(raw, org)
        key = canonical_link(raw, org) or raw
        if key not in seen:
            seen.add(key)
            out.append(link)
    return out


def names_item(link: str, href: str, org: str) -> bool:
    """Whether ``link`` (either form) names the item at the full ``href``."""
    parsed = parse_link(link, org)
    return parsed is not None and parsed.href == href


def link_problem(link: str, org: str, kinds: Iterable[str]) -> str | None:
    """Why a well-formed link of this org to one of ``kinds`` is still wrong, or ``None``.

    The message quotes the link: lists are stored without repeats, so an index in an error
    path counts the stored entries, and the quoted link says which one is meant.
    """
    parsed = parse_link(link, org)
    if parsed is None or parsed.org != org or parsed.kind not in set(kinds):
        return None
    if parsed.kind in GVC_SCOPED_KINDS and parsed.gvc is None:
        return f"'{link}' must name the {parsed.kind}'s GVC: //gvc/<gvc>/{parsed.kind}/<name>"
    if parsed.kind not in GVC_SCOPED_KINDS and parsed.gvc is not None:
        return f"'{link}': a {parsed.kind} is not inside a GVC; use //{parsed.kind}/<name>"
    if parsed.kind == "user":
        problem = user_name_problem(parsed.name)
        if problem is not None:
            return f"'{link}' must name the user by email address: {problem}"
    return None


def placement_locations(gvc: dict[str, Any]) -> tuple[str, ...]:
    """The names of a GVC's locations (``spec.staticPlacement.locationLinks``, last path
    segment), in placement order, each once: where its workloads and volume sets live."""
    placed = ((gvc.get("spec") or {}).get("staticPlacement") or {}).get("locationLinks") or []
    return tuple(dict.fromkeys(str(link).rstrip("/").rsplit("/", 1)[-1] for link in placed))


def gvc_locations(gvc: dict[str, Any] | None, placements: Mapping[str, tuple[str, ...]], org: str) -> tuple[str, ...]:
    """Where ``gvc`` is placed, as the engine resolved it (``KindContext.placements``: its links
    and what its ``locationQuery`` selects), or its ``locationLinks`` alone when the engine did
    not resolve it (a hook called outside the engine)."""
    if not gvc:
        return ()
    resolved = placements.get(f"/org/{org}/gvc/{gvc.get('name')}")
    return resolved if resolved is not None else placement_locations(gvc)


#: The status dependencies of a status that reads where GVCs are placed (through
#: :func:`gvc_locations`): the placements themselves, and the locations a GVC's
#: ``locationQuery`` selects (a location written later changes what it selects).
READS_PLACEMENTS: tuple[StatusDependency, ...] = (
    ReadsPlacements(),
    ReadsSelected(kind="location", holder="gvc", path="spec.staticPlacement.locationQuery"),
)
