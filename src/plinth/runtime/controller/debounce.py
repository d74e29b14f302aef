"""When the control loop's next pass starts: a leading-edge debounce.

:class:`LeadingDebounce` turns wake-ups (a change in the informer's cache, a verdict of the
prober, a retry) into pass starts:

- **the first wake-up after quiet starts a pass at once**: no pass started within the last
  ``window_s``, so nothing is gained by waiting (a single write reaches the engine one window
  sooner than with a trailing debounce). "At once" is after ``settle_s`` without another
  wake-up (the loop uses 20 ms, bounded by the window): the writes of one ``apply`` of a stack
  come a few milliseconds apart, and a pass started on the first of them (the GVC) would hold
  the pass that creates the workloads back by a whole pass of nothing (a quarter of a second
  of ``podman ps`` on a busy machine);
- **wake-ups within the window coalesce**: those arriving while a pass runs, or within
  ``window_s`` of its start, make *one* next pass, which starts when the window ends (a burst of
  writes, ``cpln apply`` of a stack, costs at most one more pass than a trailing debounce);
- **a pass that did nothing holds no window** (:meth:`LeadingDebounce.release`, called by the
  loop for a pass that changed nothing in the engine and left the gateway and the report to the
  next pass, never two passes in a row): the first pass of an apply that saw only its GVC does
  not hold back the one that creates the workloads until its window ends;
- **none is lost**: the wake-up flag is cleared just before a pass starts, never after, so a
  wake-up arriving during a pass (or during the wait) always leads to a pass that starts after
  it; passes never overlap because the loop runs them one after the other from one task.

The clock and the sleep are parameters so that tests can drive it without waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class LeadingDebounce:
    """Decides when the next pass starts (module docstring)."""

    def __init__(
        self,
        window_s: float,
        *,
        settle_s: float = 0.0,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.window_s, self.settle_s = window_s, settle_s
        self._wakes = 0
        self._clock = clock
        self._sleep = sleep
        self._wake = asyncio.Event()
        #: When the last pass started (clock time); none yet.
        self.started: float | None = None

    def clock(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def wake(self) -> None:
        """Ask for a pass (safe to call any number of times: they coalesce)."""
        self._wakes += 1
        self._wake.set()

    def release(self) -> None:
        """The pass that started last holds no window: the next starts as after quiet (once the
        wake-ups pause for ``settle_s``). For a pass that did nothing, so that the pass it left
        its work to (the rest of a burst came in while it ran) is not held back for nothing."""
        self.started = None

    @property
    def pending(self) -> bool:
        """Whether a wake-up is waiting for a pass."""
        return self._wake.is_set()

    async def next_pass(self) -> None:
        """Return when the next pass should start: after a wake-up, at once when no pass
        started within ``window_s``, else when the window since the last start ends."""
        await self._wake.wait()
        left = 0.0 if self.started is None else self.started + self.window_s - self.clock()
        if left > 0:
            await self._sleep(left)  # later wake-ups land in this pass too
        elif self.settle_s > 0:  # quiet before: start once the wake-ups pause for settle_s
            until = self.clock() + self.window_s
            while True:
                seen = self._wakes
                await self._sleep(min(self.settle_s, max(0.0, until - self.clock())))
                if self._wakes == seen or self.clock() >= until:
                    break
        # Cleared before the pass, not after: a wake-up during the pass asks for another.
        self._wake.clear()
        self.started = self.clock()
