"""The watch hub: one per process, the one reader of the change log for all its streams.

It reads the log (``Storage.changes``) after the last seq it read, once per batch, and offers
each change to the watchers (``engine/watch.py``) of its org and kind, those of all GVCs and
those of its own: a store read per batch, never per watcher. It reads

- on SQLite, when the shared change counter moves (every commit of every worker moves it; looked
  at every :data:`MARKER_TICK_S` while the process has watchers);
- on PostgreSQL, on a notification on ``record_cache.CHANNEL`` (every commit of every replica
  sends one);
- and every ``poll_s`` in any case, so a lost notification delays a change by at most that.

It also judges every watcher again when the access generation moves (401 for a revoked key,
403 for a lost right), trims the log to its retention, and ends every stream when the server
shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from plinth.engine.store_errors import storage_unavailable
from plinth.engine.watch import BATCH, Watcher, lost_right
from plinth.engine.watch_events import Event, Shared
from plinth.errors import APIError, WatchTooSlow
from plinth.storage.base import Change, Storage, StorageError

log = logging.getLogger("plinth.watch")

#: Seconds between looks at SQLite's change counter (a memory read).
MARKER_TICK_S = 0.005
#: The shortest time between two batches of several changes: under a stream of writes, each
#: watcher gets one write (of all the changes since the last) per this much or more.
MIN_BATCH_S = 0.02
#: Under a stream of writes, the fan-out takes at most about 1 / FANOUT_SHARE of the loop.
FANOUT_SHARE = 8
#: Seconds between looks at the access generation, for ``Watcher.recheck``.
RECHECK_S = 0.25


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
            try:
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
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not silence every stream of the process
                log.exception("watch: the hub's loop failed; going on")
                await asyncio.sleep(self.poll_s)

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
