"""Shared builders for the domain tests: they drive the engine's real pure pipeline."""

from __future__ import annotations

from typing import Any

from plinth.engine.pipeline import build_candidate
from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.domain import DOMAIN

ORG = "acme"
NOW = "2026-01-01T00:00:00.000Z"
NAME = "app.example.com"
PROD = f"/org/{ORG}/gvc/prod"


def wl(workload: str, gvc: str = "prod") -> str:
    """A short workload link, as a client would write it."""
    return f"//gvc/{gvc}/workload/{workload}"


def route(prefix: str | None = "/", workload: str = "web", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"workloadLink": wl(workload), **extra}
    if prefix is not None:
        out["prefix"] = prefix
    return out


def gvc_item(
    alias: str = "prod-alias",
    locations: tuple[str, ...] = ("aws-us-east-2", "gcp-us-east1"),
    dedicated: bool = False,
    legacy_domain: str | None = None,
) -> Item:
    spec: dict[str, Any] = {
        "staticPlacement": {"locationLinks": [f"/org/{ORG}/location/{loc}" for loc in locations]},
        "loadBalancer": {"dedicated": dedicated},
    }
    if legacy_domain is not None:
        spec["domain"] = legacy_domain
    return {"kind": "gvc", "name": "prod", "alias": alias, "spec": spec}


def context(resolved: dict[str, Item | None] | None = None) -> KindContext:
    return KindContext(org=ORG, now=NOW, resolved=resolved or {})


def build(
    spec: dict[str, Any] | None = None,
    name: str = NAME,
    tags: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    ctx: KindContext | None = None,
) -> tuple[Item, list[FieldError]]:
    body: dict[str, Any] = dict(extra or {})
    if spec is not None:
        body["spec"] = spec
    if tags is not None:
        body["tags"] = tags
    return build_candidate(DOMAIN, body, None, ctx or context(), name)


def accept(spec: dict[str, Any] | None = None, **kwargs: Any) -> Item:
    """The stored item; fails the test with the errors when the body is rejected."""
    item, errors = build(spec, **kwargs)
    assert errors == [], errors
    return item


def reject(spec: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, str]:
    """Errors as {path: message}; fails the test when the body is accepted."""
    _, errors = build(spec, **kwargs)
    assert errors, "expected the body to be rejected"
    return {e.path: e.message for e in errors}


def status_of(
    spec: dict[str, Any] | None = None, resolved: dict[str, Item | None] | None = None, **kwargs: Any
) -> dict[str, Any]:
    ctx = context(resolved)
    item = accept(spec, ctx=ctx, **kwargs)
    return DOMAIN.status.compute(item, ctx)
