"""A GVC's cross-field rules, each one a user mistake the schema cannot see:

- a location, pull secret or KEDA secret is listed at most once (a link written in short
  form ``//location/x`` and full form ``/org/{org}/location/x`` is the same link);
- ``staticPlacement.locationOptions`` tune locations the GVC is placed in: when placement
  is a fixed list (no ``locationQuery``), each option's location must be in that list;
- ``staticPlacement.locationQuery.kind``, when given, is ``location``, and its terms and sort
  name properties a location has (``LOCATION.query_properties``, or a ``spec.``/``status.``
  path), so the engine can run it;
- a location in ``staticPlacement.locationLinks`` is enabled (``validate_resolved``; the
  engine has already refused one that does not exist).
- environment variable names are unique;
- ``keda.identityLink``, when it names a GVC, names this one (an identity is GVC-scoped).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.location import LOCATION
from plinth.meta import parse_link


def _canonical(link: str, org: str) -> str:
    parsed = parse_link(link, org)
    return parsed.href if parsed is not None else link


def _duplicates(links: Iterable[str], path: str, org: str, what: str) -> list[FieldError]:
    seen: set[str] = set()
    errors = []
    for index, link in enumerate(links):
        key = _canonical(link, org)
        if key in seen:
            errors.append(FieldError(f"{path}[{index}]", f"lists the same {what} twice"))
        seen.add(key)
    return errors


def _placement_errors(placement: dict[str, Any], org: str) -> list[FieldError]:
    base = "spec.staticPlacement"
    links = placement.get("locationLinks", [])
    options = placement.get("locationOptions", [])
    errors = _duplicates(links, f"{base}.locationLinks", org, "location")
    option_links = [option["locationLink"] for option in options]
    errors += _duplicates(option_links, f"{base}.locationOptions", org, "location")
    query = placement.get("locationQuery")
    if query is None:
        placed = {_canonical(link, org) for link in links}
        for index, link in enumerate(option_links):
            if _canonical(link, org) not in placed:
                errors.append(
                    FieldError(
                        f"{base}.locationOptions[{index}].locationLink",
                        "must be one of spec.staticPlacement.locationLinks",
                    )
                )
    else:
        if query.get("kind", "location") != "location":
            errors.append(FieldError(f"{base}.locationQuery.kind", "must be 'location'"))
        errors += _query_property_errors(query.get("spec") or {}, f"{base}.locationQuery.spec")
    return errors


def _queryable(prop: str) -> bool:
    parts = prop.split(".")
    return prop in LOCATION.presentation.query_properties or (
        parts[0] in ("spec", "status") and len(parts) > 1 and all(parts)
    )


def _query_property_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    errors = []
    named = [(f"{path}.terms[{i}].property", t.get("property")) for i, t in enumerate(spec.get("terms") or [])]
    named.append((f"{path}.sort.by", (spec.get("sort") or {}).get("by")))
    for where, prop in named:
        if prop is not None and not _queryable(prop):
            allowed = ", ".join(LOCATION.presentation.query_properties)
            message = f"a location has no property '{prop}'; use one of {allowed} or a spec.* path"
            errors.append(FieldError(where, message))
    for i, term in enumerate(spec.get("terms") or []):
        if "rel" in term:
            errors.append(FieldError(f"{path}.terms[{i}].rel", "a location has no relations; use property or tag"))
    return errors


def validate_gvc_locations(item: Item, ctx: KindContext) -> list[FieldError]:
    """Every location in ``locationLinks`` is enabled (the engine resolved them: they exist)."""
    errors = []
    placement = (item.get("spec") or {}).get("staticPlacement") or {}
    for index, link in enumerate(placement.get("locationLinks") or []):
        location = ctx.lookup(_canonical(link, ctx.org))
        if location is not None and (location.get("spec") or {}).get("enabled", True) is not True:
            errors.append(
                FieldError(
                    f"spec.staticPlacement.locationLinks[{index}]",
                    f"location '{location['name']}' is disabled; enable it first (PATCH spec.enabled: true)",
                )
            )
    return errors


def _env_errors(env: list[dict[str, Any]]) -> list[FieldError]:
    seen: set[str] = set()
    errors = []
    for index, var in enumerate(env):
        if var["name"] in seen:
            errors.append(FieldError(f"spec.env[{index}].name", f"duplicate variable '{var['name']}'"))
        seen.add(var["name"])
    return errors


def _keda_errors(keda: dict[str, Any], gvc_name: str, org: str) -> list[FieldError]:
    errors = _duplicates(keda.get("secrets", []), "spec.keda.secrets", org, "secret")
    identity = keda.get("identityLink")
    parsed = parse_link(identity, org) if identity is not None else None
    if parsed is not None and parsed.gvc is not None and parsed.gvc != gvc_name:
        errors.append(FieldError("spec.keda.identityLink", f"must name an identity of this GVC ('{gvc_name}')"))
    return errors


def validate_gvc(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Every cross-field rule of the module docstring; reads only ``item`` and ``ctx.org``."""
    spec = item.get("spec", {})
    errors = _placement_errors(spec.get("staticPlacement", {}), ctx.org)
    errors += _duplicates(spec.get("pullSecretLinks", []), "spec.pullSecretLinks", ctx.org, "secret")
    errors += _env_errors(spec.get("env", []))
    errors += _keda_errors(spec.get("keda", {}), item["name"], ctx.org)
    return errors
