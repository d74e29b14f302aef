"""An identity's cross-field rules (types-ts identity.ts), each finding at its JSON path:

- ``aws.trustPolicy`` only beside ``aws.policyRefs`` (the role Control Plane creates gets that
  trust policy; an existing ``roleName`` keeps its own);
- a network resource's ``resolverIP`` only beside its ``FQDN`` (it resolves that name);
- over ``networkResources`` and ``nativeNetworkResources`` together, each ``name`` once, each
  ``FQDN`` once, and no ``name`` equal to an ``FQDN`` (workloads reach resources by either);
- within a resource, each port once.

Links (cloud accounts, agents, clusters) are checked by the engine (``links``).
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext

RESOURCE_LISTS = ("networkResources", "nativeNetworkResources")


def _resources(item: Item) -> list[tuple[str, dict[str, Any]]]:
    """``(path, resource)`` of every resource of both lists, in order."""
    return [(f"{key}[{i}]", resource) for key in RESOURCE_LISTS for i, resource in enumerate(item.get(key) or [])]


def _aws_errors(item: Item) -> list[FieldError]:
    aws = item.get("aws")
    if aws and "trustPolicy" in aws and "roleName" in aws:
        return [FieldError("aws.trustPolicy", "only with policyRefs: an existing roleName keeps its own trust policy")]
    return []


def _resource_errors(resources: list[tuple[str, dict[str, Any]]]) -> list[FieldError]:
    errors: list[FieldError] = []
    for path, resource in resources:
        if "resolverIP" in resource and "FQDN" not in resource:
            errors.append(FieldError(f"{path}.resolverIP", "only with FQDN (the resolver answers for that name)"))
        seen: set[int] = set()
        for j, port in enumerate(resource.get("ports") or []):
            if port in seen:
                errors.append(FieldError(f"{path}.ports[{j}]", f"port {port} is listed twice"))
            seen.add(port)
    return errors


def _unique_names(resources: list[tuple[str, dict[str, Any]]]) -> list[FieldError]:
    """Names and FQDNs are one namespace over both lists."""
    errors: list[FieldError] = []
    names: dict[str, str] = {}
    fqdns: dict[str, str] = {}
    for path, resource in resources:
        fqdn = resource.get("FQDN")
        if fqdn is not None:
            if fqdn in fqdns:
                errors.append(FieldError(f"{path}.FQDN", f"'{fqdn}' is already the FQDN of {fqdns[fqdn]}"))
            else:
                fqdns[fqdn] = path
    for path, resource in resources:
        name = resource["name"]
        if name in names:
            errors.append(FieldError(f"{path}.name", f"'{name}' is already the name of {names[name]}"))
        elif name in fqdns:
            errors.append(FieldError(f"{path}.name", f"'{name}' is the FQDN of {fqdns[name]}; names and FQDNs differ"))
        names.setdefault(name, path)
    return errors


def validate_identity(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Every cross-field rule of the module docstring, every finding at once."""
    resources = _resources(item)
    return _aws_errors(item) + _resource_errors(resources) + _unique_names(resources)
