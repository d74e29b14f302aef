"""The gateway's route table from documents: domains, workloads, GVCs, and the ready replicas.

:func:`route_table` is pure. It takes what the API serves (domains, workloads and GVCs as JSON
documents) and what runs (:data:`ReadyPorts`: the 127.0.0.1 host ports of the *ready*
replicas of each workload port), and answers the :class:`~.routes.RouteTable` that
:func:`~.routes.caddy_config` turns into Caddy's configuration. Nothing here does I/O.

Ways in (docs/runtime.md, "Gateway routes from documents"):

- **Each workload's own endpoint**: the host ``{workload}-{gvcAlias}.{base_domain}`` (the host
  of the workload's ``status.endpoint``; ``base_domain`` defaults to ``localhost``, which
  resolves to 127.0.0.1) goes to the workload's first container port. Cron workloads have none.
- **Domain routes** (``spec.ports[].routes[]``): matched on the domain's name (and ``*.{name}``
  with ``acceptAllSubdomains``; on every host with ``acceptAllHosts``), then ``hostPrefix`` or
  ``hostRegex``, then ``prefix`` or ``regex``; ``replacePrefix`` and
  ``headers.request.set`` apply; the target is ``workloadLink`` at ``port`` (default: the
  workload's first container port).
- **Subdomain routing** (``spec.gvcLink``): ``{workload}.{domain}`` goes to that workload of
  the GVC, at its first port.
- **A domain's own ``spec.workloadLink``**: the domain (and its subdomains with
  ``acceptAllSubdomains``) goes to that workload, at its first port.

Every route carries its workload's ``firewallConfig.external.inboundAllowCIDR`` (an empty or
missing list allows nobody: 403) and the ready ports of its target (none: 503 at once). A
target workload that does not exist is a route without replicas (503), named by its link.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from plinth.runtime.gateway.routes import Route, RouteTable

#: ``(gvc, workload, container port)`` to the 127.0.0.1 host ports of its ready replicas.
ReadyPorts = Mapping[tuple[str, str, int], Sequence[int]]
WorkloadKey = tuple[str, str]  # gvc, workload
DEFAULT_BASE_DOMAIN = "localhost"


def _link_parts(link: str) -> dict[str, str]:
    """``{'gvc': 'main', 'workload': 'web'}`` from ``//gvc/main/workload/web`` or a full link."""
    parts = [part for part in link.split("/") if part]
    return {parts[i]: parts[i + 1] for i in range(len(parts) - 1) if parts[i] in ("org", "gvc", "workload")}


def _self_link(doc: Mapping[str, Any]) -> str:
    for link in doc.get("links") or ():
        if link.get("rel") == "self":
            return str(link.get("href", ""))
    return ""


def _first_port(workload: Mapping[str, Any]) -> int | None:
    """The workload's first container port (``ports[].number``, or the deprecated ``port``)."""
    for container in (workload.get("spec") or {}).get("containers") or ():
        for port in container.get("ports") or ():
            if "number" in port:
                return int(port["number"])
        if container.get("port") is not None:
            return int(container["port"])
    return None


def allowed_cidrs(workload: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Who may reach the workload from outside: its external ``inboundAllowCIDR`` (none: nobody)."""
    if workload is None:
        return ()
    firewall = (workload.get("spec") or {}).get("firewallConfig") or {}
    return tuple((firewall.get("external") or {}).get("inboundAllowCIDR") or ())


class _Targets:
    """Workloads by ``(gvc, name)`` and the ready ports, answering routes to one of them."""

    def __init__(self, workloads: Iterable[Mapping[str, Any]], ready: ReadyPorts) -> None:
        self.workloads: dict[WorkloadKey, Mapping[str, Any]] = {}
        for workload in workloads:
            parts = _link_parts(_self_link(workload))
            if "gvc" in parts:
                self.workloads[(parts["gvc"], str(workload.get("name")))] = workload
        self.ready = ready

    def route(self, key: WorkloadKey, port: int | None = None, **match: Any) -> Route:
        workload = self.workloads.get(key)
        number = port if port is not None else (_first_port(workload) if workload is not None else None)
        upstreams = tuple(self.ready.get((*key, number), ())) if workload is not None and number else ()
        return Route(
            upstreams=upstreams,
            allow_cidrs=allowed_cidrs(workload),
            name=f"//gvc/{key[0]}/workload/{key[1]}",
            **match,
        )


def _domain_routes(domain: Mapping[str, Any], targets: _Targets, default_gvc: str | None) -> list[Route]:
    name = str(domain.get("name"))
    spec = domain.get("spec") or {}
    hosts: tuple[str, ...] = (name,)
    if spec.get("acceptAllHosts"):
        hosts = ()
    elif spec.get("acceptAllSubdomains"):
        hosts = (name, f"*.{name}")
    routes: list[Route] = []
    if spec.get("gvcLink"):
        gvc = _link_parts(str(spec["gvcLink"])).get("gvc")
        for key in sorted(targets.workloads):
            if key[0] == gvc and _first_port(targets.workloads[key]) is not None:
                routes.append(targets.route(key, hosts=(f"{key[1]}.{name}",)))
        return routes
    if spec.get("workloadLink"):
        parts = _link_parts(str(spec["workloadLink"]))
        return [targets.route((parts.get("gvc", default_gvc or ""), parts.get("workload", "")), hosts=hosts)]
    for port in spec.get("ports") or ():
        for rule in port.get("routes") or ():
            parts = _link_parts(str(rule.get("workloadLink", "")))
            key = (parts.get("gvc", default_gvc or ""), parts.get("workload", ""))
            routes.append(
                targets.route(
                    key,
                    rule.get("port"),
                    hosts=hosts,
                    prefix=rule.get("prefix") or "/",
                    regex=rule.get("regex"),
                    replace_prefix=rule.get("replacePrefix"),
                    host_prefix=rule.get("hostPrefix"),
                    host_regex=rule.get("hostRegex"),
                    headers=dict(((rule.get("headers") or {}).get("request") or {}).get("set") or {}),
                )
            )
    return routes


def endpoint_host(workload_name: str, gvc: Mapping[str, Any], base_domain: str = DEFAULT_BASE_DOMAIN) -> str:
    """The host of a workload's own endpoint: ``{workload}-{gvcAlias}.{base_domain}``."""
    return f"{workload_name}-{gvc.get('alias') or gvc.get('name')}.{base_domain}"


def route_table(
    domains: Iterable[Mapping[str, Any]],
    workloads: Iterable[Mapping[str, Any]],
    gvcs: Mapping[str, Mapping[str, Any]],
    ready: ReadyPorts,
    *,
    base_domain: str = DEFAULT_BASE_DOMAIN,
) -> RouteTable:
    """Every way in (module docstring). ``gvcs`` maps GVC names to their documents (for aliases)."""
    targets = _Targets(workloads, ready)
    routes: list[Route] = []
    for key, workload in sorted(targets.workloads.items()):
        spec = workload.get("spec") or {}
        gvc = gvcs.get(key[0])
        if gvc is None or spec.get("type") == "cron" or _first_port(workload) is None:
            continue
        routes.append(targets.route(key, hosts=(endpoint_host(key[1], gvc, base_domain),)))
    for domain in sorted(domains, key=lambda d: str(d.get("name"))):
        # A route link may name its GVC relative to the domain's (``//workload/web``): only the
        # domain's gvcLink can say which one.
        default_gvc = _link_parts(str((domain.get("spec") or {}).get("gvcLink", ""))).get("gvc")
        routes += _domain_routes(domain, targets, default_gvc)
    return RouteTable(tuple(routes))


__all__ = ["DEFAULT_BASE_DOMAIN", "ReadyPorts", "allowed_cidrs", "endpoint_host", "route_table"]
