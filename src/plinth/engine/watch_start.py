"""Starting a watch: what it selects (a list path, or ``-query`` with its terms), where it
starts (``resourceVersion``, the current items, or now), and the checks a list makes first.

The stream itself is the server's (``server/watch_stream.py``); the hub and the watcher are
``engine/watch.py``'s and ``engine/watch_hub.py``'s.
"""

from __future__ import annotations

from typing import Any

from plinth.engine.access import Access
from plinth.engine.listing import org_column, parent_for, require_org
from plinth.engine.opaque import SEQ_TOKEN_LENGTH, open_seq, token_key
from plinth.engine.querywire import parse_query
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.engine.store_errors import storage_error
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


_VERSION_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _not_a_version() -> BadRequest:
    return BadRequest("resourceVersion must be a version a watch answered", {"parameter": "resourceVersion"})


def parse_version(raw: str | None) -> str | None:
    """A ``resourceVersion`` (or SSE ``Last-Event-ID``) as sent, checked for its form only: an
    opaque version (``engine/opaque.py``; ``start_watch`` opens it), a bare number (a version from
    before they were sealed: 410 there), or absent."""
    if raw is None:
        return None
    sealed = len(raw) == SEQ_TOKEN_LENGTH and set(raw) <= _VERSION_CHARACTERS
    if not (sealed or (raw.isascii() and raw.isdigit() and len(raw) <= 19)):
        raise _not_a_version()
    return raw


def _seq_of(key: bytes, version: str) -> int:
    """The change seq a version stands for. A bare number is a version from before versions
    were sealed: the change log cannot be matched to it, so list again (410)."""
    seq = open_seq(key, version)
    if seq is not None:
        return seq
    if version.isdigit():
        raise _list_again(version)
    raise _not_a_version()


def _list_again(version: str) -> Gone:
    # No seqs in the message: they count every org's writes.
    return Gone(
        "resourceVersion is no longer held (the change log was trimmed past it): list again, and watch "
        "with sendInitialEvents=true or from a version the new watch answers",
        {"resourceVersion": version},
    )


async def start_watch(
    engine: Engine,
    hub: WatchHub,
    info: RequestInfo,
    selection: Selection,
    access: Access,
    principal: str,
    recheck: Recheck,
    *,
    version: str | None,
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
            seq = _seq_of(await token_key(engine.storage), version)
            if seq < bounds.horizon or seq > bounds.last:
                raise _list_again(version)
            start = seq
        else:
            start = max(bounds.last, hub.last_seq)
    except StorageError as exc:
        raise storage_error(exc, kind.name, "") from exc
    watcher = Watcher(hub, selection, access, principal, start, recheck, buffer_bytes, records)
    hub.hold(watcher)
    return watcher
