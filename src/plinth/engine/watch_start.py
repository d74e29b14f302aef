"""Starting a watch: what it selects (a list path, or ``-query`` with its terms), where it
starts (``resourceVersion``, the current items, or now), and the checks a list makes first.

The stream itself is the server's (``server/watch_stream.py``); the hub and the watcher are
``engine/watch.py``'s and ``engine/watch_hub.py``'s.
"""

from __future__ import annotations

from typing import Any

from plinth.engine.access import Access
from plinth.engine.listing import org_column, parent_for, require_org
from plinth.engine.querywire import parse_query
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine, storage_error
from plinth.engine.watch import Recheck, Selection, Watcher, lost_right
from plinth.engine.watch_hub import WatchHub
from plinth.errors import BadRequest, Gone
from plinth.storage.base import Record, StorageError


def selection_for(engine: Engine, info: RequestInfo, query: Any | None) -> Selection:
    """The watch of a list path, or of ``-query`` with ``query`` (its terms; sort and paging
    mean nothing to a stream and are ignored)."""
    kind = engine.kind_of(info)
    engine.require_verb(kind, "list")
    flt = parse_query(kind, query)[0] if query is not None else None
    return Selection(kind, org_column(kind, info), parent_for(kind, info), flt)


def parse_version(raw: str | None) -> int | None:
    """A ``resourceVersion`` (or SSE ``Last-Event-ID``) as sent: digits, or absent."""
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise BadRequest("resourceVersion must be a version a watch or list answered", {"parameter": "resourceVersion"})
    return int(raw)


async def start_watch(
    engine: Engine,
    hub: WatchHub,
    info: RequestInfo,
    selection: Selection,
    access: Access,
    principal: str,
    recheck: Recheck,
    *,
    version: int | None,
    initial: bool,
    buffer_bytes: int,
) -> Watcher:
    """A watcher starting after ``version`` (410 when the log no longer holds what follows
    it), or with the current items first (``initial``), or now; 404 for a missing org, 403
    when no policy grants ``view`` on the kind at all."""
    kind = selection.kind
    if info.org is not None and kind.scope != "root":
        await require_org(engine, info)
    if not access.holds_any(kind, "view"):
        raise lost_right(kind)
    try:
        bounds = await engine.storage.change_bounds()
        records: list[Record] | None = None
        if initial:
            start, records = await engine.storage.snapshot(selection.request())
        elif version is not None:
            if version < bounds.horizon or version > bounds.last:
                raise Gone(
                    f"resourceVersion {version} is no longer held (the change log holds {bounds.horizon + 1} "
                    f"to {bounds.last}): list again, and watch from the list's resourceVersion",
                    {"resourceVersion": str(version), "oldest": str(bounds.horizon), "newest": str(bounds.last)},
                )
            start = version
        else:
            start = max(bounds.last, hub.last_seq)
    except StorageError as exc:
        raise storage_error(exc, kind.name, "") from exc
    watcher = Watcher(hub, selection, access, principal, start, recheck, buffer_bytes, records)
    hub.hold(watcher)
    return watcher
