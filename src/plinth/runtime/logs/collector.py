"""Collecting what managed containers write: their engine's log files, read where they left off.

Each container runs with the engine's file log driver (``run`` sets it: docs/runtime.md), so
everything it writes to stdout and stderr is already in one file, timed by the engine to the
nanosecond. The collector reads those files instead of running one ``logs --follow`` process
per container (each a Go binary of tens of MB):

- **Which containers.** The managed containers of its scope that name a workload
  (``plinth.org``, ``plinth.gvc``, ``plinth.workload``); one engine ``list`` on each of the
  engine's events that changes what runs (the prober's :data:`~..controller.prober.CHANGES`),
  and at least every :data:`RELIST_S` (events are not replayed, and the stream can end). A new
  container is inspected once, for its log file. A new container's events (``create``,
  ``start``) make the list due :data:`NEW_DELAY_S` later, not at once: its engine commands
  would contend for the engine's lock with the pass starting it and the next ones (a stack's
  replicas start together), and nothing is lost by waiting (the engine's file holds what it
  writes, read from its start); a container that ends is listed at once (its ``died``).
- **When to read.** When inotify says a file changed (:mod:`.filewatch`), or, without
  inotify, every :data:`~.filewatch.POLL_S`; and every file on each list (a container that
  died is read before the pass that removes it, as a rule: a removal between a last write
  and the read loses what the file held beyond the stored offset).
- **Where from.** The store keeps each file's inode and the offset up to which its lines are
  stored, in the transaction that stores them; a collector that starts again resumes there:
  nothing lost, nothing twice. A file that is another inode than the one stored (the engine
  rotated it meanwhile) is read from its start; the rest of the old one is lost.
- **Labels.** ``org, gvc, workload, location`` from the container's identity labels;
  ``container`` from ``plinth.container``; ``replica`` from ``plinth.replica`` (a cron job's
  run: ``plinth.job-run``); ``provider`` from the location name's prefix (``aws`` for
  ``aws-us-east-2``); ``stream``, ``stdout`` or ``stderr``, from each record.

After each read that stored lines, :attr:`Collector.signal` is notified (tails wait on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO

from plinth.runtime.containers.protocol import GVC, LOCATION, ORG, WORKLOAD, ContainerEngine, ContainerInfo
from plinth.runtime.logs.filewatch import POLL_S, FileWatch
from plinth.runtime.logs.records import FLUSH_AT, parse
from plinth.runtime.logs.store import LogStore, Position
from plinth.runtime.logs.tailing import Signal
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

#: Labels of the controller's slots and cron runs (``controller/plan.py``, ``controller/jobs.py``).
REPLICA, CONTAINER, JOB_RUN = "plinth.replica", "plinth.container", "plinth.job-run"
#: Event actions that change which containers there are.
CHANGES = frozenset({"create", "start", "died", "die", "stop", "kill", "remove", "destroy", "restart", "rename"})
#: The longest the collector goes without listing the engine.
RELIST_S = 10.0
#: Event actions of a container that is new: listed this long after the event, not at once
#: (module docstring).
NEW = frozenset({"create", "start"})
NEW_DELAY_S = 1.0
#: Bytes read from a file at a time (a backlog is read in pieces of this size); at least
#: ``FLUSH_AT``, so that a line that never ends is taken, cut, rather than waited for.
CHUNK = FLUSH_AT


def stream_labels(labels: Mapping[str, str]) -> dict[str, str] | None:
    """The log labels of a container (but ``stream``), ``None`` when it runs no workload."""
    org, gvc, workload = labels.get(ORG), labels.get(GVC), labels.get(WORKLOAD)
    if not (org and gvc and workload):
        return None
    location = labels.get(LOCATION, "")
    return {
        "org": org,
        "gvc": gvc,
        "workload": workload,
        "container": labels.get(CONTAINER, ""),
        "location": location,
        "provider": location.split("-", 1)[0],
        "replica": labels.get(REPLICA) or labels.get(JOB_RUN, ""),
    }


@dataclass
class Source:
    """One container's log file as this collector reads it."""

    id: str
    path: str
    labels: dict[str, str]
    file: IO[bytes] | None = None
    inode: int = 0
    offset: int = 0
    checked: bool = field(default=False)  # the stored position was compared with the file
    #: Its workload's lines were dropped (the workload is gone): what it still writes is not stored.
    dropped: bool = field(default=False)


class Collector:
    """Collects the logs of ``driver``'s managed containers carrying ``scope`` into ``store``."""

    def __init__(self, driver: ContainerEngine, store: LogStore, scope: Mapping[str, str] | None = None) -> None:
        self.driver, self.store, self.scope = driver, store, dict(scope or {})
        self.signal = Signal()
        self.sources: dict[str, Source] = {}  # container id -> source
        self._fileless: set[str] = set()  # ids of containers whose engine keeps no log file
        self._list_due = asyncio.Event()
        #: Lines stored since start (for tests and the bench).
        self.lines = 0

    async def run(self) -> None:
        """Collect until cancelled."""
        watch = FileWatch()
        follower = asyncio.create_task(self._follow(watch))
        try:
            while True:
                try:
                    await self.sync(watch)
                except Exception:
                    log.exception("collecting logs failed; trying again")
                listed = asyncio.get_running_loop().time()
                while (wait := RELIST_S - (asyncio.get_running_loop().time() - listed)) > 0:
                    changed = await watch.wait(min(wait, POLL_S) if not watch.available else wait)
                    if self._list_due.is_set():
                        break
                    by_path = {s.path: s for s in self.sources.values()}
                    due = (
                        list(self.sources.values())
                        if not watch.available
                        else [by_path[p] for p in changed if p in by_path]
                    )
                    if due:
                        await self._read(due, watch)
        finally:
            await cancel_and_wait(follower)
            watch.close()
            for source in self.sources.values():
                if source.file is not None:
                    source.file.close()

    async def _follow(self, watch: FileWatch) -> None:
        """The engine's events: a change of what runs makes a list due (a new container's
        :data:`NEW_DELAY_S` later)."""
        aio = asyncio.get_running_loop()
        later: asyncio.TimerHandle | None = None

        def due() -> None:
            self._list_due.set()
            watch.wake()

        try:
            while True:
                try:
                    async for event in self.driver.events(self.scope):
                        if event.action in NEW:
                            if later is None or later.cancelled() or later.when() <= aio.time():
                                later = aio.call_later(NEW_DELAY_S, due)
                        elif event.action in CHANGES:
                            due()
                except Exception as exc:
                    log.warning("the engine's event stream failed (%s); collecting logs on the relist", exc)
                await asyncio.sleep(RELIST_S)
        finally:
            if later is not None:
                later.cancel()

    async def sync(self, watch: FileWatch | None = None) -> None:
        """List the scope, start reading new containers, read every file, drop the gone."""
        self._list_due.clear()
        infos = await self.driver.list(self.scope)
        current = {info.id: info for info in infos if stream_labels(info.labels) is not None}
        for info in current.values():
            if info.id not in self.sources and info.id not in self._fileless:
                await self._add(info, watch)
        await self._read(list(self.sources.values()), watch)
        self._fileless &= current.keys()
        gone = [cid for cid in self.sources if cid not in current]
        for cid in gone:
            source = self.sources.pop(cid)
            if source.file is not None:
                source.file.close()
            if watch is not None:
                watch.discard(source.path)
        stored = await asyncio.to_thread(self.store.positions)
        stale = [cid for cid in stored if cid not in current]
        if stale:
            await asyncio.to_thread(self.store.forget, stale)

    async def _add(self, info: ContainerInfo, watch: FileWatch | None) -> None:
        full = await self.driver.inspect(info.name)
        labels = stream_labels(info.labels)
        if full is None or labels is None:
            return
        if not full.log_path:
            # Made by an older Plinth, or by hand: inspected once, not on every list.
            log.warning("container %s has no log file (its log driver is not a file one): not collected", info.name)
            self._fileless.add(info.id)
            return
        self.sources[info.id] = Source(info.id, full.log_path, labels)  # watched once opened

    async def _read(self, sources: list[Source], watch: FileWatch | None) -> None:
        opened: list[str] = []
        stored = await asyncio.to_thread(self._read_files, sources, opened)
        for path in opened:  # watches are changed on the loop's thread, which reads their events
            if watch is not None:
                watch.add(path)
        if stored:
            self.lines += stored
            self.signal.notify()

    def _read_files(self, sources: list[Source], opened: list[str]) -> int:
        """Read each source to its end, storing what it holds (in a worker thread); the paths
        of files opened (first read, or a new file after a rotation) go to ``opened``, to be
        watched: a file is watched only once it exists, which may be after the container is."""
        stored = 0
        for source in sources:
            try:
                stored += self._read_file(source, opened)
            except OSError as exc:
                log.debug("reading the log of %s: %s", source.id[:12], exc)
        return stored

    def _open(self, source: Source) -> None:
        source.file = open(source.path, "rb")  # noqa: SIM115 (kept open between reads)
        source.inode, source.offset = os.fstat(source.file.fileno()).st_ino, 0
        if not source.checked:
            source.checked = True
            position = self.store.position(source.id)
            if position is not None and position.inode == source.inode:
                source.offset = position.offset

    def discard(self, org: str, gvc: str | None = None, workload: str | None = None) -> None:
        """Store nothing more of the containers now collected of a workload (or, without ``gvc``
        and ``workload``, an org) whose lines are being dropped: a container that is going may
        still be read (its file is open) after the drop. Containers made later are collected."""
        for source in list(self.sources.values()):
            labels = source.labels
            if labels["org"] == org and gvc in (None, labels["gvc"]) and workload in (None, labels["workload"]):
                source.dropped = True

    def _read_file(self, source: Source, opened: list[str]) -> int:
        stored = 0
        if source.dropped:
            return 0
        if source.file is None:
            self._open(source)
            opened.append(source.path)
        assert source.file is not None
        if os.fstat(source.file.fileno()).st_size < source.offset:
            source.offset = 0  # truncated in place (not what the engines do: they rename a new file over)
        while True:
            source.file.seek(source.offset)
            data = source.file.read(CHUNK)
            records, consumed = parse(data)
            if consumed:
                source.offset += consumed
                position = Position(source.path, source.inode, source.offset)
                self.store.append(source.id, position, source.labels, records)
                stored += len(records)
            if consumed == 0 or len(data) < CHUNK:
                break
        # Rotated (a new file at the path): the old one is read to its end; go on with the new.
        with contextlib.suppress(FileNotFoundError):
            if os.stat(source.path).st_ino != source.inode:
                source.file.close()
                source.file = None
                stored += self._read_file(source, opened)
        return stored
