"""Where a domain spec holds links, each with its JSON path; and which GVC the domain serves.

One walk over the spec feeds three consumers: the references the engine checks, the
"all routes in a single GVC" rule, and the status (which reads the served GVC).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

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
