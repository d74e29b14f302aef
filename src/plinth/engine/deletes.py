"""What a delete must check and take along, for any kind (``Engine.delete`` runs these).

- a container (a GVC) that still holds items is not deleted: 409 naming them;
- an item that items of a kind listing its kind in ``protects`` link to is not deleted: 409
  naming them (a volume set a workload mounts); nor changed as its kind's ``protected_change``
  says they would not survive (a location a GVC is placed in, disabled);
- the records stored under the item (``owned_records``: a workload's commands) go with it.
"""

from __future__ import annotations

from collections.abc import Mapping

from plinth.engine.references import GUARD_NAMES, child_names
from plinth.errors import Conflict
from plinth.kinds.base import KindSpec
from plinth.storage.base import Delete, Operation, Storage
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

#: Records read per page when collecting an item's owned records.
OWNED_PAGE = 500


async def guard_children(storage: Storage, kinds: Mapping[str, KindSpec], kind: KindSpec, org: str, name: str) -> None:
    """409 while the container ``name`` still holds items of the kinds scoped to it."""
    children = await child_names(storage, kinds, kind.name, org, name)
    if children:
        shown = ", ".join(children[:GUARD_NAMES]) + (" and more" if len(children) > GUARD_NAMES else "")
        raise Conflict(
            f"{kind.title} '{name}' still holds {shown}; delete them first",
            {"kind": kind.name, "name": name, "dependants": children[:GUARD_NAMES]},
        )


async def guard_protected(
    storage: Storage,
    kinds: Mapping[str, KindSpec],
    kind: KindSpec,
    org: str,
    name: str,
    href: str,
    change: str | None = None,
) -> None:
    """409 while items of kinds that protect this one link to it (``KindSpec.protects``): for
    its delete, or for the ``change`` an update makes (``"be disabled"``: ``protected_change``)."""
    guards = [k.name for k in kinds.values() if kind.name in k.protects]
    if not guards:
        return
    holders = await storage.referrers(org, href, guards)
    if holders:
        names = [f"{r.key.kind}/{r.key.name}" for r in holders[:GUARD_NAMES]]
        shown = ", ".join(names) + (" and more" if len(holders) > GUARD_NAMES else "")
        message = (
            f"{kind.title} '{name}' is in use by {shown}; change or delete them first"
            if change is None
            else f"{kind.title} '{name}' cannot {change}: it is in use by {shown}; change them first"
        )
        raise Conflict(message, {"kind": kind.name, "name": name, "dependants": names})


async def owned_deletes(storage: Storage, kind: KindSpec, org: str, gvc: str | None, name: str) -> list[Operation]:
    """Deletes of the records stored under the item (``KindSpec.owned_records``)."""
    ops: list[Operation] = []
    parent = f"{gvc}/{name}" if gvc else name
    for record_kind in kind.owned_records:
        owned = await every_record(storage, ListRequest(org, record_kind, parent, limit=OWNED_PAGE))
        ops += [Delete(r.key, r.version) for r in owned]
    return ops
