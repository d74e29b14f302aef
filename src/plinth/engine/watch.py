"""Watches: what one stream selects and holds (:class:`Watcher`), and the events it sends.

The process's :class:`~plinth.engine.watch_hub.WatchHub` reads the change log
(``Storage.changes``) and offers each change to the watchers of its org, kind and GVC; a
:class:`Watcher` judges it (its selection, a query's terms, the principal's ``view``) and keeps
what its stream has not sent yet, or has it written at once (``Flush``: the server's direct
writer). An offer never waits: a watcher whose buffer passes its bound is ended (``slow``), so a
consumer that does not read never slows writers or other watchers, and its memory stays bounded.

A watcher that resumes from an older version, or starts with the current items, first drains a
backlog of its own (the snapshot's items, then the log's changes in pages, read as its stream
asks for more) and joins the hub once it has caught up: a resuming client costs reads of its
own, never a stall of the others. Exactly once and in order follows from seq order being commit
order (``storage/postgres.py``, ``_append_changes``): a watcher takes a change only when its seq
is above the last one it took.

The wire form of an event (NDJSON or SSE) is the server's (``server/watch_stream.py``); the
events themselves are ``engine/watch_events.py``'s.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from plinth.engine.access import Access
from plinth.engine.address import Address
from plinth.engine.watch_events import Entry, Event, Shared, Signal
from plinth.errors import APIError, Forbidden
from plinth.kinds.base import KindSpec
from plinth.storage import evaluate
from plinth.storage.base import Change, Record, Storage, StorageError
from plinth.storage.query import Filter, ListRequest

#: Changes read per store read (the hub's batches, a backlog's pages).
BATCH = 500


class HubSide(Protocol):
    """What a watcher asks of the hub that feeds it (``engine/watch_hub.py``'s ``WatchHub``):
    declared here, so a watcher knows its hub only by this and the hub imports the watcher."""

    storage: Storage
    last_seq: int
    dirty: set[Watcher]

    def add(self, watcher: Watcher) -> None: ...
    def remove(self, watcher: Watcher) -> None: ...
    def release(self, watcher: Watcher) -> None: ...
    def slow_error(self, limit: int) -> APIError: ...
    def store_error(self, exc: StorageError) -> APIError: ...


#: Re-judges a watcher after the access generation moved: its new access, or the error that
#: ends it (401 for a revoked key, 403 for a lost right).
Recheck = Callable[[], Awaitable[Access]]


#: Writes a joined watcher's entries out: a batch it takes whole (``Shared``) as it is offered,
#: else what it queued, at the end of each batch (the server's direct writer,
#: ``server/watch_stream.py``); ``None``: the stream takes them itself.
Flush = Callable[["Watcher", "Shared | None"], None]


@dataclass(frozen=True)
class Selection:
    """What a watch is of: a kind in an org (``org`` is ``""`` for the root kind), in one parent
    GVC or all (``parent`` ``None``), optionally narrowed by a query's terms."""

    kind: KindSpec
    org: str
    parent: str | None
    filter: Filter | None = None

    def request(self) -> ListRequest:
        return ListRequest(self.org, self.kind.name, self.parent, 0, None, self.filter or Filter())


class Watcher:
    """One stream's subscription: what it selects, as whom, and what it has yet to send.

    ``after`` is the last seq it has taken (or skipped); the stream resumes from it.
    """

    __slots__ = (
        "_backlog",
        "_initial",
        "_queue",
        "_queued",
        "_waiter",
        "access",
        "after",
        "done",
        "ended",
        "flush",
        "hub",
        "joined",
        "limit",
        "principal",
        "recheck",
        "sees_all",
        "selection",
        "shown",
    )

    def __init__(
        self,
        hub: HubSide,
        selection: Selection,
        access: Access,
        principal: str,
        after: int,
        recheck: Recheck,
        limit_bytes: int,
        initial: list[Record] | None = None,
    ):
        self.hub = hub
        self.selection = selection
        self.principal = principal
        self.recheck = recheck
        self.limit = limit_bytes
        self.after = after
        self.access = access
        self.sees_all = access.sees_every(selection.kind, "view")
        #: A query watch's keys of items it has shown as matching (to say DELETED when they stop).
        self.shown: set[tuple[str, str]] | None = set() if selection.filter is not None else None
        self._initial: deque[Record] | None = deque(initial) if initial is not None else None
        self._backlog = True  # changes after ``after`` may precede what the hub delivers
        self.joined = False
        self._queue: deque[Entry] | None = None
        self.flush: Flush | None = None
        self._queued = 0
        self._waiter: asyncio.Future[bool] | None = None
        self.done = False  # nothing more will be queued (ended, or an ERROR is queued)
        self.ended = False  # the stream has gone (client disconnect): drop everything

    # -- what the hub and the backlog put in -------------------------------------------

    def offer(self, event: Event, bounded: bool = True) -> None:
        """Take ``event`` if it is new to this watcher and its principal may view the item.

        The backlog's pages are read only once the queue is empty, so they are not ``bounded``."""
        if event.seq <= self.after or self.done:
            return
        self.after = event.seq
        delivered = self._judge(event)
        if delivered is not None:
            self._push(delivered, len(event.change.doc) + 96 if bounded else 0)

    def _judge(self, event: Event) -> Event | None:
        sel = self.selection
        key = event.change.key
        if key.kind != sel.kind.name or key.org != sel.org or (sel.parent is not None and key.parent != sel.parent):
            return None  # a backlog holds every change of the store
        if self.shown is not None:
            assert sel.filter is not None
            ident = (key.parent, key.name)
            if event.type != "DELETED" and evaluate.matches(sel.filter, event.item, key.parent):
                self.shown.add(ident)
            elif ident in self.shown:
                self.shown.discard(ident)
                event = event.as_type("DELETED")
            else:
                return None
        if self.sees_all:
            return event
        href = Address.stored(sel.kind, key).href
        stamp = None if event.type == "DELETED" else (event.item.get("id", ""), int(event.item.get("version", 0)))
        if self.access.allows(sel.kind, "view", href, stamp, lambda: event.item):
            return event
        return None

    def take_shared(self, shared: Shared) -> bool:
        """Take a whole batch at once, when this watcher would take every change of it; else
        ``False`` (the hub offers its changes one by one)."""
        first = shared.events[0].seq
        if self.done or not self.sees_all or self.shown is not None or self.after >= first:
            return False
        self.after = shared.seq
        if self.flush is not None and self.joined and not self._queue:
            self.flush(self, shared)  # the hot path: straight out, nothing queued
        else:
            self._push(shared, shared.size)
        return True

    def drain(self) -> list[Entry]:
        """Everything queued, taken out (for :data:`Flush`)."""
        queue = self._queue
        if not queue:
            return []
        out = list(queue)
        queue.clear()
        self._queued = 0
        return out

    def _push(self, entry: Entry, size: int) -> None:
        queue = self._queue
        if queue is None:
            queue = self._queue = deque()
        if self.flush is not None and self.joined:
            queue.append(entry)  # written at the end of the batch; the writer bounds the buffer
            self.hub.dirty.add(self)
            return
        self._queued += size
        if self._queued > self.limit:
            queue.clear()
            self._queued = 0
            self.end(self.hub.slow_error(self.limit))
            return
        queue.append(entry)
        self._wake()

    def end(self, error: APIError | None) -> None:
        """Queue the final ``ERROR`` (``None``: the client went away) and stop taking events."""
        if self.done:
            return
        self.done = True
        self.hub.remove(self)
        self.hub.release(self)
        if error is None:
            self.ended = True
        else:
            if self._queue is None:
                self._queue = deque()
            self._queue.append(Signal("ERROR", error=error))
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            _settle(waiter, True)

    # -- what the stream takes out -----------------------------------------------------

    def position(self) -> int:
        """The version a client resumes from to miss nothing this watcher selects."""
        if self.joined:
            return max(self.after, self.hub.last_seq)
        return self.after

    def bookmark(self) -> Signal:
        return Signal("BOOKMARK", self.position())

    async def take(self, timeout: float) -> list[Entry] | None:
        """What to send next: the queue, or the next part of the backlog; ``[]`` after
        ``timeout`` seconds of nothing (time for a bookmark); ``None`` once the stream is over."""
        while True:
            if self.ended:
                return None
            if self._queue:
                out = list(self._queue)
                self._queue.clear()
                self._queued = 0
                return out
            if self.done:
                return None
            if self._initial is not None:
                return self._initial_part()
            if self._backlog:
                await self._read_backlog()
                continue
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(timeout, _settle, waiter, False)
            try:
                fired = await waiter
            finally:
                timer.cancel()
                self._waiter = None
            if not fired:
                return []

    def _initial_part(self) -> list[Entry]:
        assert self._initial is not None
        out: list[Entry] = []
        sel = self.selection
        while self._initial and len(out) < BATCH:
            record = self._initial.popleft()
            event = Event(Change(self.after, record.key, "ADDED", record.doc))
            if self.shown is not None:
                self.shown.add((record.key.parent, record.key.name))
            if self.sees_all:
                out.append(event)
                continue
            href = Address.stored(sel.kind, record.key).href
            if self.access.allows(sel.kind, "view", href, (record.id, record.version), lambda e=event: e.item):  # type: ignore[misc]
                out.append(event)
        if not self._initial:
            self._initial = None
            out.append(Signal("BOOKMARK", self.after, initial_end=True))
        return out

    async def _read_backlog(self) -> None:
        """The next page of changes after ``after``; joins the hub once none are left before
        what the hub has read (no await between that look and joining: nothing slips between)."""
        if self.after < self.hub.last_seq:
            try:
                page = await self.hub.storage.changes(self.after, BATCH)
            except StorageError as exc:
                self.end(self.hub.store_error(exc))
                return
            for change in page:
                if not self.done and change.seq <= self.hub.last_seq:
                    self.offer(Event(change), bounded=False)
            if page and page[-1].seq < self.hub.last_seq and not self.done:
                return
        if not self.done:
            self._backlog = False
            self.joined = True
            self.hub.add(self)


def _settle(waiter: asyncio.Future[bool], fired: bool) -> None:
    if not waiter.done():
        waiter.set_result(fired)


def lost_right(kind: KindSpec) -> Forbidden:
    return Forbidden(
        f"Permission 'view' on {kind.name} is no longer granted", {"permission": "view", "kind": kind.name}
    )
