"""Watches: the change log (``Storage.changes``) delivered live to every stream of a process.

One :class:`WatchHub` per process reads the log once per batch, after the last seq it read, and
offers each change to the watchers of its org and kind; a :class:`Watcher` keeps what its stream
has not sent yet. The hub never waits for a watcher: an offer only appends to the watcher's
queue, and a watcher whose queue passes its bound is ended (``slow``), so a consumer that does
not read never slows writers or other watchers, and its memory stays bounded.

When the hub reads: on SQLite, when the shared change counter moves (every commit of every
worker moves it; looked at every :data:`MARKER_TICK_S`); on PostgreSQL, on a notification on
``record_cache.CHANNEL`` (every commit of every replica sends one); and in any case every
``poll_s``, so a lost notification delays a change by at most that much.

A watcher that resumes from an older version, or starts with the current items, first drains a
backlog of its own (the snapshot's items, then the log's changes in pages, read as its stream
asks for more) and joins the hub once it has caught up: a resuming client costs reads of its
own, never a stall of the others. Exactly once and in order follows from seq order being commit
order (``storage/postgres.py``, ``_append_changes``): a watcher takes a change only when its seq
is above the last one it took.

The wire form of an event (NDJSON or SSE) is the server's (``server/watch_stream.py``); an
:class:`Event` keeps each encoding made of it, so 1,000 watchers of one change share one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from plinth.engine.access import Access
from plinth.engine.render import href_of
from plinth.engine.service import storage_unavailable
from plinth.errors import APIError, Forbidden, WatchTooSlow
from plinth.kinds.base import KindSpec
from plinth.storage import evaluate
from plinth.storage.base import Change, Record, Storage, StorageError
from plinth.storage.query import Filter, ListRequest

log = logging.getLogger("plinth.watch")

#: Seconds between looks at SQLite's change counter (a memory read).
MARKER_TICK_S = 0.005
#: Changes read per store read (the hub's batches, a backlog's pages).
BATCH = 500
#: The shortest time between two batches: under a stream of writes, each watcher gets one write
#: (of all the changes since the last) per this much, not one per change.
MIN_BATCH_S = 0.02
FANOUT_SHARE = 8
#: Seconds between looks at the access generation, for :meth:`Watcher.recheck`.
RECHECK_S = 0.25

#: Re-judges a watcher after the access generation moved: its new access, or the error that
#: ends it (401 for a revoked key, 403 for a lost right).
Recheck = Callable[[], Awaitable[Access]]


class Event:
    """One change as watchers receive it. ``item`` is parsed once, when some watcher needs it;
    ``encoded`` keeps each wire form made of it (by form name)."""

    __slots__ = ("_item", "change", "encoded", "type")

    def __init__(self, change: Change, type_: str | None = None):
        self.change = change
        self.type = type_ or change.type
        self._item: Any = None
        self.encoded: dict[str, bytes] = {}

    @property
    def seq(self) -> int:
        return self.change.seq

    @property
    def item(self) -> dict[str, Any]:
        if self._item is None:
            self._item = orjson.loads(self.change.doc)
        return self._item

    def as_type(self, type_: str) -> Event:
        """The same change delivered as another type (a query watch's ``DELETED``)."""
        if type_ == self.type:
            return self
        other = Event(self.change, type_)
        other._item = self._item
        return other


@dataclass(frozen=True, slots=True)
class Signal:
    """A per-watcher event: a ``BOOKMARK`` (with ``initial_end`` after the initial items) or the
    final ``ERROR``."""

    type: str
    seq: int = 0
    error: APIError | None = None
    initial_end: bool = False


class Shared:
    """The changes of one batch for one kind, handed as one entry to every watcher that takes
    them all (it sees every item and has no query): its encodings are made once for them all."""

    __slots__ = ("encoded", "events", "seq", "size")

    def __init__(self, events: list[Event]):
        self.events = events
        self.seq = events[-1].seq
        self.size = sum(len(e.change.doc) + 96 for e in events)
        self.encoded: dict[str, bytes] = {}


#: What a watcher's queue holds.
Entry = Event | Signal | Shared
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
        hub: WatchHub,
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
        href = href_of(sel.kind, key.org, key.parent or None, key.name)
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
            href = href_of(sel.kind, record.key.org, record.key.parent or None, record.key.name)
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


class WatchHub:
    """A process's watchers and the one reader of the change log that feeds them."""

    def __init__(
        self,
        storage: Storage,
        *,
        poll_s: float,
        keep: int,
        max_age_s: float,
        trim_every_s: float,
        generation: Callable[[], Awaitable[str | None]],
    ):
        self.storage = storage
        self.poll_s = poll_s
        self.keep = keep
        self.max_age_s = max_age_s
        self.trim_every_s = trim_every_s
        self._generation = generation
        self.last_seq = 0
        #: Joined watchers by (org, kind, parent GVC or None for all of them).
        self._by_kind: dict[tuple[str, str, str | None], set[Watcher]] = {}
        #: How many of those groups each (org, kind) has: changes of others are not even parsed.
        self._kinds: dict[tuple[str, str], int] = {}
        self._per_principal: dict[str, int] = {}
        #: Every open stream's watcher, joined or still catching up.
        self._all: set[Watcher] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed: APIError | None = None
        self._rechecking: asyncio.Task[None] | None = None
        #: Watchers with entries to write at the end of the current batch.
        self.dirty: set[Watcher] = set()

    # -- the registry ---------------------------------------------------------------------

    def count(self, principal: str) -> int:
        return self._per_principal.get(principal, 0)

    def watchers(self) -> list[Watcher]:
        return list(self._all)

    def add(self, watcher: Watcher) -> None:
        sel = watcher.selection
        group = (sel.org, sel.kind.name, sel.parent)
        if group not in self._by_kind:
            self._by_kind[group] = set()
            kind = (sel.org, sel.kind.name)
            self._kinds[kind] = self._kinds.get(kind, 0) + 1
        self._by_kind[group].add(watcher)

    def remove(self, watcher: Watcher) -> None:
        sel = watcher.selection
        group = (sel.org, sel.kind.name, sel.parent)
        members = self._by_kind.get(group)
        if members is None:
            return
        members.discard(watcher)
        if not members:
            del self._by_kind[group]
            kind = (sel.org, sel.kind.name)
            self._kinds[kind] -= 1
            if not self._kinds[kind]:
                del self._kinds[kind]

    def hold(self, watcher: Watcher) -> None:
        """Count a new stream (for its principal's bound, rechecks and shutdown) until it ends."""
        if self._closed is not None:
            watcher.end(self._closed)
            return
        self._all.add(watcher)
        self._per_principal[watcher.principal] = self._per_principal.get(watcher.principal, 0) + 1

    def release(self, watcher: Watcher) -> None:
        if watcher not in self._all:
            return
        self._all.discard(watcher)
        left = self._per_principal.get(watcher.principal, 0) - 1
        if left > 0:
            self._per_principal[watcher.principal] = left
        else:
            self._per_principal.pop(watcher.principal, None)

    def slow_error(self, limit: int) -> APIError:
        return WatchTooSlow(
            f"The watch fell more than {limit} bytes behind; resume from the last resourceVersion read",
            {"buffer_bytes": limit},
        )

    def store_error(self, exc: StorageError) -> APIError:
        log.warning("watch: cannot read the change log (%s)", exc)
        return storage_unavailable()

    @property
    def closed(self) -> APIError | None:
        return self._closed

    # -- the reader -----------------------------------------------------------------------

    async def start(self) -> None:
        self.last_seq = (await self.storage.change_bounds()).last
        if self.storage.change_marker() is None:
            from plinth.storage.record_cache import CHANNEL

            with contextlib.suppress(Exception):  # no listener: the poll alone
                await self.storage.listen(CHANNEL, self.notified)
        self._task = asyncio.create_task(self._run(), name="plinth-watch-hub")

    def notified(self, payload: str | None = None) -> None:
        """Something may have been committed: read the log now."""
        self._wake.set()

    async def _run(self) -> None:
        marker = self.storage.change_marker()
        seen_marker = marker
        next_poll = next_recheck = next_read = time.monotonic()
        next_trim = time.monotonic() + self.trim_every_s
        generation = await self._safe_generation()
        while self._closed is None:
            now = time.monotonic()
            if marker is not None and self._all:
                await asyncio.sleep(MARKER_TICK_S)
                marker = self.storage.change_marker()
                due = marker != seen_marker or self._wake.is_set() or now >= next_poll
            else:
                marker = self.storage.change_marker()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=max(0.0, min(next_poll, next_recheck) - now))
                due = self._wake.is_set() or time.monotonic() >= next_poll or marker != seen_marker
            now = time.monotonic()
            if due:
                if now < next_read:  # under a stream of writes, batches come at most this often
                    await asyncio.sleep(next_read - now)
                    now = time.monotonic()
                self._wake.clear()
                seen_marker = self.storage.change_marker() if marker is not None else None
                next_poll = now + self.poll_s
                read = await self._read()
                # Under a stream of writes (a batch of several changes), the next batch waits so
                # that the fan-out takes at most about 1 / FANOUT_SHARE of the loop: the busier
                # it is, the more changes each write to a watcher carries. A lone change, the
                # usual case, goes out at once.
                if read > 1:
                    next_read = now + max(MIN_BATCH_S, (time.monotonic() - now) * FANOUT_SHARE)
            if now >= next_recheck:
                next_recheck = now + RECHECK_S
                moved = await self._safe_generation()
                if moved != generation:
                    generation = moved
                    self._recheck_all()
            if now >= next_trim:
                next_trim = now + self.trim_every_s
                with contextlib.suppress(StorageError):
                    await self.storage.trim_changes(self.keep, self.max_age_s)

    async def _safe_generation(self) -> str | None:
        try:
            return await self._generation()
        except StorageError:
            return None

    async def _read(self) -> int:
        """Deliver what the log holds after ``last_seq``; how many changes that was."""
        read = 0
        try:
            if not self._by_kind:
                self.last_seq = max(self.last_seq, (await self.storage.change_bounds()).last)
                return 0
            while True:
                batch = await self.storage.changes(self.last_seq, BATCH)
                read += len(batch)
                if not batch:
                    return read
                self._deliver(batch)
                if len(batch) < BATCH:
                    return read
        except StorageError as exc:
            log.warning("watch: cannot read the change log (%s)", exc)
            return read

    def _deliver(self, batch: list[Change]) -> None:
        """Offer ``batch`` to the watchers of each change's org and kind (all of its GVCs, or its
        own), in seq order per watcher: a watcher that takes every change of its selection takes
        the batch's as one entry."""
        by_kind: dict[tuple[str, str], list[Event]] = {}
        for change in batch:
            key = change.key
            if (key.org, key.kind) in self._kinds:
                by_kind.setdefault((key.org, key.kind), []).append(Event(change))
        for (org, kind), events in by_kind.items():
            self._offer(self._by_kind.get((org, kind, None)), events)
            by_parent: dict[str, list[Event]] = {}
            for event in events:
                by_parent.setdefault(event.change.key.parent, []).append(event)
            for parent, mine in by_parent.items():
                self._offer(self._by_kind.get((org, kind, parent)), mine)
        self.last_seq = batch[-1].seq
        dirty, self.dirty = self.dirty, set()
        for watcher in dirty:
            if watcher.flush is not None and not watcher.done:
                watcher.flush(watcher, None)

    @staticmethod
    def _offer(watchers: set[Watcher] | None, events: list[Event]) -> None:
        if not watchers:
            return
        shared = Shared(events)
        for watcher in list(watchers):
            if not watcher.take_shared(shared):
                for event in events:
                    watcher.offer(event)

    def _recheck_all(self) -> None:
        """Judge every watcher again (the access generation moved), off the reading loop."""
        if self._rechecking is not None and not self._rechecking.done():
            self._rechecking.add_done_callback(lambda _: self._recheck_all())
            return
        self._rechecking = asyncio.create_task(self._recheck(list(self.watchers())))

    async def _recheck(self, watchers: list[Watcher]) -> None:
        for watcher in watchers:
            if watcher.done:
                continue
            try:
                access = await watcher.recheck()
            except APIError as exc:
                watcher.end(exc)
                continue
            except StorageError:
                continue  # judged again at the next move; the stream keeps its last access
            kind = watcher.selection.kind
            if not access.holds_any(kind, "view"):
                watcher.end(lost_right(kind))
                continue
            watcher.access = access
            watcher.sees_all = access.sees_every(kind, "view")

    async def close(self, error: APIError) -> None:
        """End every stream with ``error`` and stop reading (server shutdown)."""
        self.shutdown(error)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self._rechecking is not None:
            self._rechecking.cancel()

    def shutdown(self, error: APIError) -> None:
        """End every stream with ``error`` now (callable from a synchronous hook)."""
        if self._closed is None:
            self._closed = error
        for watcher in list(self.watchers()):
            watcher.end(error)
        self._wake.set()


def lost_right(kind: KindSpec) -> Forbidden:
    return Forbidden(
        f"Permission 'view' on {kind.name} is no longer granted", {"permission": "view", "kind": kind.name}
    )
