"""Seeding: the server creates, in one transaction, the items an org lacks (its built-ins).

``server/bootstrap.py`` calls it at start-up and for a new org. Stored items are left as they
are, so seeding is idempotent, and cheap when nothing is missing: one list of the kind. The
items go through the same build as any write (``engine/build.py``) and commit through the
same compare-and-swap loop (``engine/commits.py``): when another process seeds some of them
meanwhile, the names are read again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plinth.engine.build import Built, Write, build
from plinth.engine.commits import Commit, until_committed
from plinth.engine.core import EngineCore
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.writes import SYSTEM
from plinth.errors import Conflict
from plinth.kinds.base import Item, KindSpec
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

#: Names read per page when seeding looks for what is missing.
NAMES_PAGE = 1000


async def create_missing(
    core: EngineCore, kind_name: str, org: str, items: Sequence[tuple[Item, Mapping[str, Any]]]
) -> int:
    """Create, as the server and in one transaction, those of ``items`` (each a body and the
    server-owned values the server writes with it) whose name is not stored yet. Returns how
    many it created."""
    kind = core.kinds[kind_name]
    info = RequestInfo(kind=kind_name, org=org)

    async def attempt() -> Commit[int] | int:
        stored = await _names(core, kind, org)
        built: list[Built] = []
        for body, system in items:
            if body["name"] in stored:
                continue
            t = core.target(info, body["name"])
            write = Write(lambda old, body=body: body, SYSTEM, "create", make_system=lambda old, s=system: dict(s))  # type: ignore[misc]
            result = await build(core, t, None, None, None, write)
            assert isinstance(result, Built)
            built.append(result)
        if not built:
            return 0

        async def done() -> int:
            await core.statuses.settle_selectors(kind, org, built[-1].now)
            return len(built)

        return Commit([op for b in built for op in b.ops], done)

    def too_fast() -> Exception:
        return Conflict(f"The {kind_name} items of org '{org}' are changing too fast to seed; retry", {"org": org})

    return await until_committed(core.storage, kind_name, attempt, too_fast)


async def _names(core: EngineCore, kind: KindSpec, org: str) -> set[str]:
    records = await every_record(core.storage, ListRequest(org, kind.name, "", NAMES_PAGE))
    return {record.key.name for record in records}
