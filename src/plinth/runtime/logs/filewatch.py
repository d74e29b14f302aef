"""Being told when a log file grows: Linux's inotify, through ``inotify_simple``.

:class:`FileWatch` watches files by path and records which changed (written to, renamed over,
deleted); :meth:`FileWatch.wait` returns when one did. It reads the inotify descriptor from the
asyncio loop (``add_reader``), so a quiet machine costs nothing: no polling, no thread. Where
inotify cannot be had (not Linux, no instances or watches left), :attr:`FileWatch.available`
is false and the collector falls back to looking at its files every :data:`POLL_S`.

Why ``inotify_simple`` and not ``watchfiles``: the collector watches a set of files that changes
with every container, and wants to hear of a write at once from its own event loop.
``watchfiles`` watches a fixed set of paths per watcher (a new set means a new watcher, which
walks them again), reports from a thread of its own, and batches changes over a debounce window
(1.6 s by default): the latency of ``cpln logs -f`` would be that window. ``inotify_simple`` is
the kernel's interface as is: a descriptor for ``add_reader``, and a watch added or removed per
file.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys

from inotify_simple import INotify, flags

#: What makes a file worth reading again: written, or its name now another file's (a rotation
#: renames the new file over it: its link count changes) or gone.
MASK = flags.MODIFY | flags.ATTRIB | flags.MOVE_SELF | flags.DELETE_SELF
#: How often files are looked at when inotify is not available.
POLL_S = 0.5


class FileWatch:
    """Watches of one asyncio loop over files, by path (module docstring)."""

    def __init__(self) -> None:
        self._inotify: INotify | None = None
        self._paths: dict[str, int] = {}  # path -> wd
        self._wds: dict[int, str] = {}
        self.changed: set[str] = set()
        self._wake = asyncio.Event()
        if sys.platform.startswith("linux"):
            try:
                self._inotify = INotify(nonblocking=True)
            except OSError:  # no inotify instances left (fs.inotify.max_user_instances)
                return
            asyncio.get_running_loop().add_reader(self._inotify.fileno(), self._read)

    @property
    def available(self) -> bool:
        return self._inotify is not None

    def add(self, path: str) -> bool:
        """Watch ``path`` (the file it names now: after a rotation, add it again); whether the
        watch could be made."""
        if self._inotify is None:
            return False
        try:
            wd = int(self._inotify.add_watch(path, MASK))
        except OSError:  # gone already, or no watches left (fs.inotify.max_user_watches)
            return False
        self._paths[path], self._wds[wd] = wd, path
        return True

    def discard(self, path: str) -> None:
        wd = self._paths.pop(path, None)
        if wd is not None and self._inotify is not None:
            self._wds.pop(wd, None)
            with contextlib.suppress(OSError):  # a watch the kernel dropped already
                self._inotify.rm_watch(wd)

    def _read(self) -> None:
        assert self._inotify is not None
        try:
            events = self._inotify.read(timeout=0)
        except BlockingIOError:
            return
        for event in events:
            path = self._wds.get(event.wd)
            if path is None:
                continue
            self.changed.add(path)
            if event.mask & flags.IGNORED:  # the kernel removed the watch (file gone)
                self._wds.pop(event.wd, None)
                if self._paths.get(path) == event.wd:
                    del self._paths[path]
        if self.changed:
            self._wake.set()

    def wake(self) -> None:
        """Make :meth:`wait` return now (something else needs the reader)."""
        self._wake.set()

    async def wait(self, timeout: float | None) -> set[str]:
        """The paths changed since the last call, once there is one (or :meth:`wake` was
        called, or ``timeout`` passed: then possibly none)."""
        if not self._wake.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):  # not wait_for: it can swallow a cancellation
                    await self._wake.wait()
        self._wake.clear()
        changed, self.changed = self.changed, set()
        return changed

    def close(self) -> None:
        if self._inotify is not None:
            asyncio.get_running_loop().remove_reader(self._inotify.fileno())
            self._inotify.close()
            self._inotify = None
