"""Shutdown as the app sees it: the moment a worker is told to stop, before uvicorn stops it.

uvicorn stops a worker on ``SIGTERM``/``SIGINT`` by closing its listener and waiting (up to
``--shutdown-grace``) for open connections to finish; the app only hears of it afterwards
(the lifespan shutdown). A long-lived response, such as a watch stream, would hold its
connection for the whole grace period and then be cut off. So each worker's app also listens
for those signals (:meth:`Drain.listen`, chained before uvicorn's own handler) and, at once:

- marks itself draining: ``/readyz`` answers 503, so a balancer still probing stops sending;
- runs every drain hook (:meth:`Drain.on_drain`), concurrently: the watch stream registers one
  that ends its streams with a final event, so their connections close within the grace period.

A hook that fails is logged and does not stop the others.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

DrainHook = Callable[[], Awaitable[None]]
#: The signals uvicorn stops on.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
log = logging.getLogger("plinth.server")


class Drain:
    """The drain state of one worker's app, and the hooks to run when it begins."""

    def __init__(self) -> None:
        self.draining = False
        self._hooks: list[DrainHook] = []
        self._task: asyncio.Task[None] | None = None

    def on_drain(self, hook: DrainHook) -> None:
        """Run ``hook`` when this worker begins to stop (at most once)."""
        self._hooks.append(hook)

    async def begin(self) -> None:
        """Mark the app draining and run the hooks (the second call waits for the first)."""
        if self._task is None:
            self.draining = True
            self._task = asyncio.ensure_future(self._run_hooks())
        await asyncio.shield(self._task)

    async def _run_hooks(self) -> None:
        results = await asyncio.gather(*(hook() for hook in self._hooks), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                log.error("a drain hook failed: %r", result)

    def listen(self, loop: asyncio.AbstractEventLoop) -> None:
        """Begin draining on ``STOP_SIGNALS``, then let the handler installed before (uvicorn's)
        do its part. Only the main thread may set handlers, and only a signal that already has a
        handler is chained; otherwise (an app run in a test's thread) ``begin`` is the caller's."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in STOP_SIGNALS:
            previous = signal.getsignal(sig)
            if not callable(previous):
                continue  # not under uvicorn: the signal keeps its default meaning

            def handler(signum: int, frame: FrameType | None, previous: Any = previous) -> None:
                loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self.begin()))
                previous(signum, frame)

            signal.signal(sig, handler)
