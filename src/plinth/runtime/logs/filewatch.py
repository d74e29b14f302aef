"""Being told when a log file grows: Linux's inotify, through ``ctypes`` (no dependency).

:class:`FileWatch` watches files by path and records which changed (written to, renamed over,
deleted); :meth:`FileWatch.wait` returns when one did. It reads the inotify descriptor from the
asyncio loop (``add_reader``), so a quiet machine costs nothing: no polling, no thread. Where
inotify cannot be had (not Linux, no watches left), :attr:`FileWatch.available` is false and
the collector falls back to looking at its files every :data:`POLL_S`.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
import struct
import sys

IN_MODIFY, IN_ATTRIB, IN_MOVE_SELF, IN_DELETE_SELF, IN_IGNORED = 0x2, 0x4, 0x800, 0x400, 0x8000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, 0o2000000
#: What makes a file worth reading again: written, or its name now another file's (a rotation
#: renames the new file over it: its link count changes) or gone.
MASK = IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF
#: How often files are looked at when inotify is not available.
POLL_S = 0.5
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)


class FileWatch:
    """Watches of one asyncio loop over files, by path (module docstring)."""

    def __init__(self) -> None:
        self._libc: ctypes.CDLL | None = None
        self._fd = -1
        self._paths: dict[str, int] = {}  # path -> wd
        self._wds: dict[int, str] = {}
        self.changed: set[str] = set()
        self._wake = asyncio.Event()
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            except (OSError, AttributeError):
                fd = -1
            if fd >= 0:
                self._libc, self._fd = libc, fd
                asyncio.get_running_loop().add_reader(fd, self._read)

    @property
    def available(self) -> bool:
        return self._fd >= 0

    def add(self, path: str) -> bool:
        """Watch ``path`` (the file it names now: after a rotation, add it again); whether the
        watch could be made."""
        if self._libc is None:
            return False
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), MASK)
        if wd < 0:
            return False
        self._paths[path], self._wds[wd] = wd, path
        return True

    def discard(self, path: str) -> None:
        wd = self._paths.pop(path, None)
        if wd is not None and self._libc is not None:
            self._wds.pop(wd, None)
            self._libc.inotify_rm_watch(self._fd, wd)  # a watch the kernel dropped already: harmless

    def _read(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        pos = 0
        while pos + _EVENT.size <= len(data):
            wd, mask, _, length = _EVENT.unpack_from(data, pos)
            pos += _EVENT.size + length
            path = self._wds.get(wd)
            if path is None:
                continue
            self.changed.add(path)
            if mask & IN_IGNORED:  # the kernel removed the watch (file gone)
                self._wds.pop(wd, None)
                if self._paths.get(path) == wd:
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
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass
        self._wake.clear()
        changed, self.changed = self.changed, set()
        return changed

    def close(self) -> None:
        if self._fd >= 0:
            asyncio.get_running_loop().remove_reader(self._fd)
            os.close(self._fd)
            self._fd, self._libc = -1, None
