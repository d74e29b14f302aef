"""A domain's server-computed ``status`` (docs.controlplane.com/reference/domain): a pure function of the item and
the GVC it serves.

No clock, no randomness, no DNS lookups: the same item and the same GVC always give the same
status. Decisions where the sources are silent:

- ``status``: ``usedByGvc`` when the served GVC names this domain in its legacy
  ``spec.domain``; else ``warning`` when a dedicated-load-balancer warning applies; else the
  certificate stage. Plinth cannot observe public DNS, so a domain stays ``pendingDnsConfig``
  unless its owner tags it ``cpln/skipDNSCheck=true``; then it is ``pendingCertificate``
  while some TLS port waits for an ACME certificate (Plinth issues none), and ``ready`` when
  every TLS port carries its own ``serverCertificate``.
- ``locations``: one per location the served GVC is placed in (its ``locationLinks``, named
  by the link's last segment, each once, then what its ``locationQuery`` selects:
  ``ctx.placements``); ``certificateStatus`` is the certificate stage, or ``ignored``
  when no port terminates TLS.
- ``endpoints``: per port, ``{scheme}://{host}[:{number}]{path}``, the port omitted when it is
  the scheme's default. The scheme is ``tcp`` for tcp ports, ``https`` for ports with a
  ``tls`` block, ``http`` otherwise. gvcLink mode gives one wildcard endpoint per port
  (``https://*.{domain}``) without a workloadLink, since every workload of the GVC answers
  there; route mode gives one endpoint per route with the full link of its workload, the
  route's prefix as the path (regex routes have no literal path, so none).
- ``fingerprint``: the SHA-256 of the spec's canonical JSON (sorted keys, no spaces).
- ``warning``: settings that pass the schema but need a GVC with a dedicated load balancer
  (docs.controlplane.com/reference/domain: ports other than 80 and 443, ``tcp``, ``acceptAllHosts``, routes matched by
  ``hostPrefix``/``hostRegex``), in one sentence. They are warnings, not errors, because the
  GVC's load balancer can change after the domain is written (the engine refreshes a
  domain's status when its GVC changes). They are silent only when the served GVC is known
  and dedicated: with no GVC, or one that does not exist, nothing can serve them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.domain.dns import dns_config
from plinth.kinds.domain.links import served_gvc_href, workload_href
from plinth.kinds.links import gvc_locations

SKIP_DNS_CHECK_TAG = "cpln/skipDNSCheck"
STANDARD_PORTS = frozenset({80, 443})
_DEFAULT_PORTS = {"https": 443, "http": 80}


def compute_domain_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """The whole ``status`` of a domain (see the module docstring for each field)."""
    spec: dict[str, Any] = item.get("spec") or {}
    name: str = item["name"]
    gvc_href = served_gvc_href(spec, ctx.org)
    gvc = ctx.lookup(gvc_href) if gvc_href else None
    warning = _join(dedicated_load_balancer_warning(spec, gvc_href, gvc), _missing_workloads(spec, ctx))
    stage = _certificate_stage(item, spec)

    if gvc is not None and (gvc.get("spec") or {}).get("domain") == name:
        overall = "usedByGvc"
    elif warning is not None:
        overall = "warning"
    else:
        overall = stage
    status: dict[str, Any] = {
        "status": overall,
        "endpoints": _endpoints(name, spec, ctx.org),
        "dnsConfig": dns_config(name, spec, ctx.org, _alias(gvc), ctx.base_domain),
        "locations": _locations(gvc, ctx, stage if _terminates_tls(spec) else "ignored"),
        "fingerprint": fingerprint(spec),
    }
    if warning is not None:
        status["warning"] = warning
    return status


def _missing_workloads(spec: dict[str, Any], ctx: KindContext) -> str | None:
    """A sentence naming the routed workloads the engine looked up and did not find."""
    missing: list[str] = []
    for port in spec.get("ports") or []:
        for route in port.get("routes") or []:
            href = workload_href(route["workloadLink"], ctx.org)
            if href in ctx.resolved and ctx.resolved[href] is None and href not in missing:
                missing.append(href)
    if not missing:
        return None
    return f"Routes name workloads that do not exist: {', '.join(missing)}"


def _join(*sentences: str | None) -> str | None:
    present = [s for s in sentences if s]
    return " ".join(present) if present else None


def fingerprint(spec: dict[str, Any]) -> str:
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _tls_ports(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [port for port in spec.get("ports") or [] if port["protocol"] != "tcp" and "tls" in port]


def _terminates_tls(spec: dict[str, Any]) -> bool:
    return bool(_tls_ports(spec))


def _certificate_stage(item: Item, spec: dict[str, Any]) -> str:
    skip = (item.get("tags") or {}).get(SKIP_DNS_CHECK_TAG)
    if skip is not True and str(skip).lower() != "true":
        return "pendingDnsConfig"
    if any("serverCertificate" not in port["tls"] for port in _tls_ports(spec)):
        return "pendingCertificate"
    return "ready"


def _alias(gvc: Item | None) -> str | None:
    alias = (gvc or {}).get("alias")
    return alias if isinstance(alias, str) and alias else None


def _locations(gvc: Item | None, ctx: KindContext, certificate_status: str) -> list[dict[str, str]]:
    return [
        {"name": name, "certificateStatus": certificate_status} for name in gvc_locations(gvc, ctx.placements, ctx.org)
    ]


def _endpoints(name: str, spec: dict[str, Any], org: str) -> list[dict[str, str]]:
    endpoints: list[dict[str, str]] = []
    for port in spec.get("ports") or []:
        scheme = "tcp" if port["protocol"] == "tcp" else ("https" if "tls" in port else "http")
        suffix = "" if _DEFAULT_PORTS.get(scheme) == port["number"] else f":{port['number']}"
        if spec.get("gvcLink"):
            endpoints.append({"url": f"{scheme}://*.{name}{suffix}"})
            continue
        for route in port.get("routes") or []:
            path = route.get("prefix", "") if scheme != "tcp" else ""
            endpoints.append(
                {"url": f"{scheme}://{name}{suffix}{path}", "workloadLink": workload_href(route["workloadLink"], org)}
            )
    return endpoints


def needs_dedicated_load_balancer(spec: dict[str, Any]) -> list[str]:
    """The settings of ``spec`` that only a dedicated load balancer serves, as ``path value``."""
    found: list[str] = []
    if spec.get("acceptAllHosts"):
        found.append("spec.acceptAllHosts")
    for p, port in enumerate(spec.get("ports") or []):
        if port["number"] not in STANDARD_PORTS:
            found.append(f"spec.ports[{p}].number {port['number']}")
        if port["protocol"] == "tcp":
            found.append(f"spec.ports[{p}].protocol tcp")
        for r, route in enumerate(port.get("routes") or []):
            for field in ("hostPrefix", "hostRegex"):
                if field in route:
                    found.append(f"spec.ports[{p}].routes[{r}].{field}")
    return found


def dedicated_load_balancer_warning(spec: dict[str, Any], gvc_href: str | None, gvc: Item | None) -> str | None:
    """One sentence naming every setting that needs a dedicated load balancer, or ``None``."""
    found = needs_dedicated_load_balancer(spec)
    if not found or _is_dedicated(gvc):
        return None
    if gvc_href is None:
        reason = "this domain serves no GVC"
    elif gvc is None:
        reason = f"GVC '{gvc_href.rsplit('/', 1)[-1]}' does not exist"
    else:
        reason = f"GVC '{gvc_href.rsplit('/', 1)[-1]}' does not have one"
    return f"needs a GVC with a dedicated load balancer, but {reason}: {', '.join(found)}"


def _is_dedicated(gvc: Item | None) -> bool:
    if gvc is None:
        return False
    load_balancer = (gvc.get("spec") or {}).get("loadBalancer") or {}
    return load_balancer.get("dedicated") is True
