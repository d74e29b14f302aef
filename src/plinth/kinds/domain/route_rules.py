"""Rules about a domain's routes (docs.controlplane.com/reference/domain, routes[]), each error with the route
field's path.

Decisions where the sources are silent:

- Two routes clash when they match the same way (the same ``prefix``, or the same ``regex``)
  on the same host selector (``hostPrefix``/``hostRegex``, or neither). The later one is
  reported, pointing at the one it repeats.
- The tag ``cpln/routeLimitOverride`` raises the per-port limit from 150 to 200 whatever its
  value, except ``false`` (boolean or the string, any case), which a user writes to turn it off.
- "A single GVC" covers every workload a route sends traffic to: route targets, mirrors and
  canaries. The first GVC in document order is the one the others are compared with.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.domain.links import spec_links, workload_gvc_href

ROUTE_LIMIT = 150
ROUTE_LIMIT_WITH_OVERRIDE = 200
ROUTE_LIMIT_TAG = "cpln/routeLimitOverride"
CANARY_WEIGHT_TOTAL_MAX = 100
CANARY_PROTOCOLS = frozenset({"http", "http2"})


def route_limit(tags: dict[str, Any]) -> int:
    """Routes allowed per port, given the item's tags (see the module docstring)."""
    value = tags.get(ROUTE_LIMIT_TAG)
    off = value is None or value is False or (isinstance(value, str) and value.lower() == "false")
    return ROUTE_LIMIT if off else ROUTE_LIMIT_WITH_OVERRIDE


def route_errors(spec: dict[str, Any], tags: dict[str, Any], org: str) -> list[FieldError]:
    """Every route rule violation in ``spec``, ports in order, then the single-GVC rule."""
    errors: list[FieldError] = []
    accepts_other_hosts = bool(spec.get("acceptAllHosts") or spec.get("acceptAllSubdomains"))
    limit = route_limit(tags)
    for p, port in enumerate(spec.get("ports") or []):
        routes = port.get("routes") or []
        if len(routes) > limit:
            errors.append(FieldError(f"spec.ports[{p}].routes", f"number of routes exceeds maximum of {limit}"))
        seen: dict[Hashable, int] = {}
        for r, route in enumerate(routes):
            path = f"spec.ports[{p}].routes[{r}]"
            errors += _shape_errors(route, path, accepts_other_hosts)
            errors += _canary_errors(route, path, port["protocol"])
            match_field = "regex" if "regex" in route and "prefix" not in route else "prefix"
            key = (match_field, route.get(match_field), route.get("hostPrefix"), route.get("hostRegex"))
            if key in seen:
                errors.append(
                    FieldError(
                        f"{path}.{match_field}",
                        f"same {match_field} and host as spec.ports[{p}].routes[{seen[key]}]",
                    )
                )
            else:
                seen[key] = r
    errors += _single_gvc_errors(spec, org)
    return errors


def _shape_errors(route: dict[str, Any], path: str, accepts_other_hosts: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    if "prefix" in route and "regex" in route:
        errors.append(FieldError(f"{path}.regex", "cannot be combined with prefix (exactly one is allowed)"))
    if "hostPrefix" in route and "hostRegex" in route:
        errors.append(FieldError(f"{path}.hostRegex", "cannot be combined with hostPrefix"))
    if not accepts_other_hosts:
        for field in ("hostPrefix", "hostRegex"):
            if field in route:
                errors.append(FieldError(f"{path}.{field}", "needs spec.acceptAllHosts or spec.acceptAllSubdomains"))
    return errors


def _canary_errors(route: dict[str, Any], path: str, protocol: str) -> list[FieldError]:
    canaries = route.get("canaries") or []
    if not canaries:
        return []
    errors: list[FieldError] = []
    if protocol not in CANARY_PROTOCOLS:
        errors.append(FieldError(f"{path}.canaries", f"need a port with protocol http or http2, not {protocol}"))
    total = sum(canary["weight"] for canary in canaries)
    if total > CANARY_WEIGHT_TOTAL_MAX:
        errors.append(
            FieldError(f"{path}.canaries", f"total weight must be at most {CANARY_WEIGHT_TOTAL_MAX} (is {total})")
        )
    return errors


def _single_gvc_errors(spec: dict[str, Any], org: str) -> list[FieldError]:
    errors: list[FieldError] = []
    first: tuple[str, str] | None = None  # (gvc href, path where it was first seen)
    for found in spec_links(spec):
        if found.kind != "workload":
            continue
        href = workload_gvc_href(found.value, org)
        if href is None:
            continue  # malformed or foreign links are the engine's reference check to report
        if first is None:
            first = (href, found.path)
        elif href != first[0]:
            gvc = first[0].rsplit("/", 1)[-1]
            errors.append(
                FieldError(
                    found.path,
                    f"must be a workload in GVC '{gvc}' like {first[1]}: "
                    "all routes of a domain target workloads in a single GVC",
                )
            )
    return errors
