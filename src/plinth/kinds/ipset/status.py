"""An IP set's status (computed, never sent; docs.controlplane.com/reference/ipset).

Plinth allocates no addresses (it runs no load balancers), so ``ipAddresses`` is always empty
and nothing is ever bound: deleting an IP set is never refused for bound addresses. What the
status does report is whether the link works, as the platform's ``warning`` does:

- ``spec.link`` names an item that does not exist: a warning naming it;
- the item does not link back: a workload must name this IP set in
  ``spec.loadBalancer.direct.ipSet`` with the direct load balancer enabled, a GVC in
  ``spec.loadBalancer.ipSet`` with a dedicated load balancer; otherwise a warning starting
  "Cross-link misconfiguration", as the platform words it.

The status reads its linked ``workload`` and ``gvc`` (``ReadsLinked``), so a change (or the deletion) of the linked
item refreshes the status; without ``spec.link`` there is no warning.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.links import names_item
from plinth.meta import parse_link


def _names_this(value: Any, own: str, name: str, org: str) -> bool:
    """Whether a link (either form) or a bare name names the IP set at ``own``."""
    if not isinstance(value, str):
        return False
    return names_item(value, own, org) if value.startswith("/") else value == name


def _link_back_problem(kind: str, target: Item, own: str, name: str, org: str) -> str | None:
    balancer = (target.get("spec") or {}).get("loadBalancer") or {}
    if kind == "workload":
        direct = balancer.get("direct") or {}
        if direct.get("enabled") is True and _names_this(direct.get("ipSet"), own, name, org):
            return None
        return "must name this IP set in spec.loadBalancer.direct.ipSet, with the direct load balancer enabled"
    if balancer.get("dedicated") is True and _names_this(balancer.get("ipSet"), own, name, org):
        return None
    return "must name this IP set in spec.loadBalancer.ipSet, with a dedicated load balancer"


def compute_ipset_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """``{ipAddresses: [], warning?}`` from the item and what its link resolves to; pure."""
    status: dict[str, Any] = {"ipAddresses": []}
    value = (item.get("spec") or {}).get("link")
    link = parse_link(value, ctx.org) if isinstance(value, str) else None
    if link is None:
        return status
    target = ctx.lookup(link.href)
    if target is None:
        status["warning"] = f"{link.href} does not exist: its addresses cannot be bound"
        return status
    own = f"/org/{ctx.org}/ipset/{item['name']}"
    problem = _link_back_problem(link.kind, target, own, item["name"], ctx.org)
    if problem is not None:
        status["warning"] = f"Cross-link misconfiguration: {link.href} {problem}"
    return status
