"""The common resource envelope and link grammar, shared by server, engine, kinds and CLI.

Every record carries ``id, kind, version, name, description, tags, created, lastModified,
links, spec, status``. Some of these belong to the server: a client may send them (so that
``get -o json`` -> edit -> ``put`` round-trips), and the engine drops them before validation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Fields the server owns on every kind; client-sent values are ignored.
SERVER_OWNED: frozenset[str] = frozenset({"id", "version", "created", "lastModified", "links", "status"})

#: Fields the official CLI's "slim" output drops (docs/cli.md, Output formats: ``json-slim``).
SLIM_DROPPED: tuple[str, ...] = (
    "id",
    "version",
    "created",
    "lastModified",
    "links",
    "status",
    "alias",
    "origin",
    "repository",
    "tag",
    "manifest",
    "digest",
)

NAME_PATTERN = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]$")
NAME_MAX = 64
DESCRIPTION_MAX = 250
TAGS_MAX = 50
RESERVED_TAG_PREFIX = "cpln/"
#: Reserved tags a client may still set, because they switch documented behaviour on.
CLIENT_SETTABLE_RESERVED_TAGS: frozenset[str] = frozenset(
    {
        "cpln/protected",
        "cpln/routeLimitOverride",
        "cpln/clientCertificateValidation",
        "cpln/skipDNSCheck",
        "cpln/wildcard",
    }
)
PROTECTED_TAG = "cpln/protected"
#: Bounds on every query (docs/api.md, "Limits"): its terms, and the characters of a ``~`` pattern.
QUERY_TERMS_MAX = 100
QUERY_PATTERN_MAX = 256


@dataclass(frozen=True, slots=True)
class Link:
    """A parsed resource link ``/org/{org}[/gvc/{gvc}]/{kind}/{name}``."""

    org: str
    kind: str
    name: str
    gvc: str | None = None

    @property
    def href(self) -> str:
        return item_href(self.org, self.kind, self.name, self.gvc)


def parse_link(value: str, current_org: str) -> Link | None:
    """Parse a full (``/org/o/...``) or short (``//kind/name``) link; ``None`` if malformed.

    The short form means "in the current org" (docs/api.md, Paths and verbs). A user may be named by email,
    so names are not checked against the name pattern here: the referenced kind's own
    rules decide whether the item exists.
    """
    if not isinstance(value, str):
        return None
    if value.startswith("//"):
        parts = value[2:].split("/")
        org = current_org
    elif value.startswith("/org/"):
        parts = value[5:].split("/")
        if not parts or not parts[0]:
            return None
        org, parts = parts[0], parts[1:]
    else:
        return None
    if any(p == "" for p in parts):
        return None
    if not parts:
        return Link(org, "org", org)
    if parts[0] == "gvc":
        if len(parts) == 2:
            return Link(org, "gvc", parts[1])
        if len(parts) == 4:
            return Link(org, parts[2], parts[3], gvc=parts[1])
        return None
    if len(parts) == 2:
        return Link(org, parts[0], parts[1])
    return None


def item_href(org: str, kind: str, name: str, gvc: str | None = None) -> str:
    """The link of an item (``Link.href``), without building a ``Link``: every address the
    engine makes asks for one, several times a write."""
    if kind == "org":
        return f"/org/{org}"
    if kind == "gvc":
        return f"/org/{org}/gvc/{name}"
    if gvc is not None:
        return f"/org/{org}/gvc/{gvc}/{kind}/{name}"
    return f"/org/{org}/{kind}/{name}"


def collection_href(org: str, kind: str, gvc: str | None = None) -> str:
    if kind == "org":
        return "/org"
    if gvc is not None and kind != "gvc":
        return f"/org/{org}/gvc/{gvc}/{kind}"
    return f"/org/{org}/{kind}"
