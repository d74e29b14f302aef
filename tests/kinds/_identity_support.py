"""Shared drivers for the user, serviceaccount, group and policy tests: the engine's real pipeline."""

from __future__ import annotations

from typing import Any

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, KindSpec

ORG = "acme"
CTX = KindContext(org=ORG, now="2026-01-01T00:00:00.000Z", id="5b0e8a8e-1c1e-4c3a-9a55-7d1c2b3a4f60")

#: What ``get -o json`` adds to any item; a client may send it back and it is ignored.
SERVER_ENVELOPE: dict[str, Any] = {
    "id": "client-chosen-id",
    "version": 7,
    "created": "2020-01-01T00:00:00.000Z",
    "lastModified": "2020-01-01T00:00:00.000Z",
    "links": [{"rel": "self", "href": "/elsewhere"}],
    "status": {"anything": True},
}


def write(kind: KindSpec, body: dict[str, Any], name: str, old: Item | None = None) -> tuple[Item, list[FieldError]]:
    """One write as the engine runs it: strip server-owned fields, then build the candidate."""
    return build_candidate(kind, strip_server_owned(kind, body), old, CTX, name)


def paths(errors: list[FieldError]) -> list[str]:
    return [error.path for error in errors]


def stored(kind: KindSpec, body: dict[str, Any], name: str) -> Item:
    """A valid item as the engine would have stored it (server fields as ``prepare`` set them)."""
    item, errors = write(kind, body, name)
    assert errors == [], errors
    return item
