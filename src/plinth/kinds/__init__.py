"""The kind registry: one line per kind. A new kind is one module, one line here, one test file."""

from __future__ import annotations

from plinth.kinds.base import KindSpec

REGISTRY: dict[str, KindSpec] = {}


def register(kind: KindSpec) -> KindSpec:
    REGISTRY[kind.name] = kind
    return kind


def lookup(name: str) -> KindSpec | None:
    return REGISTRY.get(name)

from plinth.kinds.domain import DOMAIN  # noqa: E402

register(DOMAIN)
