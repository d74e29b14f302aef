"""Where a domain spec holds links, each with its JSON path; the references a domain declares;
and which GVC the domain serves.

One walk over the spec feeds three consumers: the references the engine checks
(:func:`domain_references`), the "all routes in a single GVC" rule, and the status (which
reads the served GVC).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from plinth.kinds.base import Item, Reference
from plinth.meta import item_href, parse_link


@dataclass(frozen=True, slots=True)
class SpecLink:
    """A link found in a spec: its JSON path, the raw value and the kind it must point at."""

    path: str
    value: str
    kind: str


def spec_links(spec: dict[str, Any]) -> Iterator[SpecLink]:
    """Every link in ``spec``, in document order."""
    if spec.get("gvcLink"):
        yield SpecLink("spec.gvcLink", spec["gvcLink"], "gvc")
    if spec.get("workloadLink"):
        yield SpecLink("spec.workloadLink", spec["workloadLink"], "workload")
    for p, port in enumerate(spec.get("ports") or []):
        port_path = f"spec.ports[{p}]"
        for r, route in enumerate(port.get("routes") or []):
            route_path = f"{port_path}.routes[{r}]"
            yield SpecLink(f"{route_path}.workloadLink", route["workloadLink"], "workload")
            for field in ("mirror", "canaries"):
                for k, target in enumerate(route.get(field) or []):
                    yield SpecLink(f"{route_path}.{field}[{k}].workloadLink", target["workloadLink"], "workload")
        tls = port.get("tls") or {}
        for field in ("clientCertificate", "serverCertificate"):
            if field in tls:
                yield SpecLink(f"{port_path}.tls.{field}.secretLink", tls[field]["secretLink"], "secret")


def workload_gvc_href(value: str, org: str) -> str | None:
    """The full href of the GVC a workload link lives in; ``None`` for a malformed or foreign link."""
    link = parse_link(value, org)
    if link is None or link.org != org or link.gvc is None or link.kind != "workload":
        return None
    return item_href(org, "gvc", link.gvc)


def gvc_href(value: str, org: str) -> str | None:
    """The full href of a ``gvcLink``; ``None`` for a malformed or foreign link."""
    link = parse_link(value, org)
    if link is None or link.org != org or link.kind != "gvc":
        return None
    return link.href


def workload_href(value: str, org: str) -> str:
    """A workload link in its full form (short ``//gvc/...`` links are expanded); else as given."""
    link = parse_link(value, org)
    return link.href if link is not None else value


def served_gvc_href(spec: dict[str, Any], org: str) -> str | None:
    """The GVC the domain sends traffic to: its ``gvcLink``, else the GVC of its first workload.

    The rules make every workload link of a valid domain point into one GVC, so the first
    one speaks for all of them.
    """
    if spec.get("gvcLink"):
        return gvc_href(spec["gvcLink"], org)
    for found in spec_links(spec):
        if found.kind == "workload":
            href = workload_gvc_href(found.value, org)
            if href is not None:
                return href
    return None


def domain_references(item: Item, org: str) -> list[Reference]:
    """The links a domain holds, each at its JSON path.

    ``gvcLink`` must name an existing GVC. Workloads are not served yet and secrets are
    checked when they are read, so those links need only be well-formed and in this org.
    The GVC that routed workloads live in is listed too (not required to exist), so its
    item reaches ``Status.compute`` (load balancer, alias, locations) and a change to it
    refreshes the domain's status.
    """
    references: list[Reference] = []
    gvcs_seen: set[str] = set()
    for found in spec_links(item.get("spec") or {}):
        must_exist = found.kind == "gvc"
        references.append(Reference(found.path, found.value, frozenset({found.kind}), must_exist=must_exist))
        if found.kind == "workload":
            gvc = workload_gvc_href(found.value, org)
            if gvc is not None and gvc not in gvcs_seen:
                gvcs_seen.add(gvc)
                # The path holds the workload's link, not the GVC's: never rewrite it with this one.
                references.append(Reference(found.path, gvc, frozenset({"gvc"}), must_exist=False, rewrite=False))
    return references
