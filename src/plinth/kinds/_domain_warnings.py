"""Settings that pass the schema but need a GVC with a dedicated load balancer: ``status.warning``.

api.md §2.3 names them: ports other than 80 and 443, the ``tcp`` protocol, ``acceptAllHosts``,
and routes matched by ``hostPrefix``/``hostRegex``. They are warnings, not errors, because the
GVC's load balancer can change after the domain is written (the engine refreshes a domain's
status when a GVC it serves changes). The served GVC must be known and dedicated for them to
be silent: with no GVC, or a GVC that does not exist, nothing can serve them.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item

STANDARD_PORTS = frozenset({80, 443})


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
