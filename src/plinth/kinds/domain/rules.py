"""The cross-field rules of a domain (docs.controlplane.com/reference/domain): every violation, each with its JSON path.

Runs after ``prepare``, so ``dnsMode`` is always set and defaults are in place. Rules that
only a dedicated load balancer can satisfy (ports other than 80/443, ``tcp``, ``acceptAllHosts``,
host-matched routes) are not errors here: they pass the schema, so they go in
``status.warning`` (see ``status``).

Decisions where the sources are silent:

- On an ``.internal`` domain every ``http``/``http2`` port needs ``tls.serverCertificate``
  (no public authority can issue a certificate for it); ``tcp`` ports ignore ``tls``.
- When one field breaks two rules the more specific one is reported: ``.internal`` rules
  replace the apex and challenge-type rules on such names.
- Replica-direct mode (spec-level ``workloadLink``) needs every port to hold exactly one
  route, and that route to target the same workload (short and full links compare equal).
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.domain.links import workload_href
from plinth.kinds.domain.names import is_apex, is_internal
from plinth.kinds.domain.route_rules import route_errors

PORTS_MAX = 10


def validate_domain(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Every cross-field rule violation of ``item`` (mutates nothing, never raises)."""
    spec: dict[str, Any] = item.get("spec") or {}
    name: str = item["name"]
    errors = _internal_errors(spec) if is_internal(name) else _mode_errors(spec, name)
    errors += _host_errors(spec)
    errors += _routing_mode_errors(spec, ctx.org)
    errors += _port_errors(spec)
    errors += route_errors(spec, item.get("tags") or {}, ctx.org)
    return errors


def _mode_errors(spec: dict[str, Any], name: str) -> list[FieldError]:
    errors: list[FieldError] = []
    ns = spec.get("dnsMode") == "ns"
    if ns and is_apex(name):
        errors.append(FieldError("spec.dnsMode", "cname is the only valid dnsMode for apex domain"))
    if spec.get("certChallengeType") == "http01":
        if ns:
            errors.append(FieldError("spec.certChallengeType", "must be dns01 when dnsMode is ns"))
        elif spec.get("workloadLink"):
            errors.append(FieldError("spec.certChallengeType", "must be dns01 when spec.workloadLink is set"))
    return errors


def _internal_errors(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    if spec.get("dnsMode") != "cname":
        errors.append(FieldError("spec.dnsMode", ".internal domains support only dnsMode cname"))
    if "gvcLink" in spec:
        errors.append(FieldError("spec.gvcLink", "is not allowed on .internal domains"))
    if "certChallengeType" in spec:
        errors.append(
            FieldError("spec.certChallengeType", "is not allowed on .internal domains (they use serverCertificate)")
        )
    for p, port in enumerate(spec.get("ports") or []):
        if port["protocol"] != "tcp" and "serverCertificate" not in (port.get("tls") or {}):
            errors.append(FieldError(f"spec.ports[{p}].tls.serverCertificate", "is required on .internal domains"))
    return errors


def _host_errors(spec: dict[str, Any]) -> list[FieldError]:
    if spec.get("acceptAllHosts") and spec.get("acceptAllSubdomains"):
        return [FieldError("spec.acceptAllSubdomains", "cannot be combined with acceptAllHosts")]
    return []


def _routing_mode_errors(spec: dict[str, Any], org: str) -> list[FieldError]:
    """gvcLink (subdomain routing), spec workloadLink (replica-direct) and routes exclude each other."""
    errors: list[FieldError] = []
    ports = spec.get("ports") or []
    if "gvcLink" in spec:
        for p, port in enumerate(ports):
            if port.get("routes"):
                errors.append(
                    FieldError(f"spec.ports[{p}].routes", "Only one of gvcLink or ports.routes may be configured")
                )
        if "workloadLink" in spec:
            errors.append(FieldError("spec.workloadLink", "cannot be combined with gvcLink"))
        return errors
    if "workloadLink" in spec:
        target = workload_href(spec["workloadLink"], org)
        for p, port in enumerate(ports):
            routes = port.get("routes") or []
            if len(routes) != 1:
                errors.append(
                    FieldError(f"spec.ports[{p}].routes", "must hold exactly one route when spec.workloadLink is set")
                )
            elif workload_href(routes[0]["workloadLink"], org) != target:
                path = f"spec.ports[{p}].routes[0].workloadLink"
                errors.append(FieldError(path, "must be the same workload as spec.workloadLink"))
    return errors


def _port_errors(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    ports = spec.get("ports") or []
    if len(ports) > PORTS_MAX:
        errors.append(FieldError("spec.ports", f"must have at most {PORTS_MAX} ports (has {len(ports)})"))
    first_index: dict[int, int] = {}
    for p, port in enumerate(ports):
        number = port["number"]
        if number in first_index:
            errors.append(
                FieldError(f"spec.ports[{p}].number", f"duplicates spec.ports[{first_index[number]}].number ({number})")
            )
        else:
            first_index[number] = p
        errors += _origin_errors(port.get("cors") or {}, f"spec.ports[{p}].cors")
    return errors


def _origin_errors(cors: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for k, origin in enumerate(cors.get("allowOrigins") or []):
        if "exact" in origin and "regex" in origin:
            errors.append(FieldError(f"{path}.allowOrigins[{k}].regex", "cannot be combined with exact"))
        elif not origin:
            errors.append(FieldError(f"{path}.allowOrigins[{k}]", "needs exactly one of exact or regex"))
    return errors
