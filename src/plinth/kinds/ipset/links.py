"""The links an IP set holds (``references``) and the rules on their shape.

- ``spec.link``: the workload (through its GVC: ``//gvc/G/workload/W``) or the GVC
  (``//gvc/G``) whose load balancer uses the addresses. It need not exist, and need not link
  back, when the IP set is written: ``cpln apply`` writes IP sets after workloads, but a client
  may as well write the IP set first; the status says what is missing (``status``);
- ``spec.locations[].name``: a location, by link or by bare name, stored as the full link
  ``/org/{org}/location/{name}``; each location once (the official CLI merges locations by
  name). Locations are not served yet, so they need not exist.
"""

from __future__ import annotations

from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, Reference
from plinth.kinds.links import link_problem

TARGET_KINDS = frozenset({"workload", "gvc"})
LOCATION = frozenset({"location"})


def location_link(value: str, org: str) -> str:
    """A bare location name as its full link; a link as it is."""
    return value if value.startswith("/") else f"/org/{org}/location/{value}"


def _spec(item: Item) -> dict[str, Any]:
    return item.get("spec") or {}


def ipset_references(item: Item, org: str) -> list[Reference]:
    """``spec.link`` and every location; none need exist (see the module docstring)."""
    spec = _spec(item)
    refs = []
    if isinstance(spec.get("link"), str):
        refs.append(Reference("spec.link", spec["link"], TARGET_KINDS, must_exist=False))
    for i, location in enumerate(spec.get("locations") or []):
        if isinstance(location.get("name"), str):
            link = location_link(location["name"], org)
            refs.append(Reference(f"spec.locations[{i}].name", link, LOCATION, must_exist=False))
    return refs


def validate_ipset(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """A workload link names its GVC; each location is listed once."""
    errors: list[FieldError] = []
    for ref in ipset_references(item, ctx.org):
        problem = link_problem(ref.link, ctx.org, ref.kinds or ())
        if problem is not None:
            errors.append(FieldError(ref.path, problem))
    seen: set[str] = set()
    for i, location in enumerate(_spec(item).get("locations") or []):
        name = location["name"].rstrip("/").rsplit("/", 1)[-1]
        if name in seen:
            errors.append(FieldError(f"spec.locations[{i}].name", f"location '{name}' is listed twice"))
        seen.add(name)
    return errors
