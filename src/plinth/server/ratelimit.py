"""Per-principal rate limiting: one token bucket per caller, in this process.

Each caller (an authenticated principal, or a client IP for requests without valid
credentials) has a bucket holding up to ``burst`` tokens that refills at ``rate`` tokens per
second. A request takes one token; with none left it is answered **429** with ``Retry-After``
(whole seconds, at least 1) and takes nothing. A runaway script empties its own bucket only,
so every other caller goes on being served.

Buckets live in the process: with N workers or replicas a caller may make up to N times the
rate in all (a load balancer spreading one client over them spreads its bucket too).

Cost: one clock read, one dictionary lookup and a few float operations per request. The
table of buckets is bounded: at :data:`MAX_BUCKETS` callers, buckets that have refilled to
full (they hold nothing worth keeping) are dropped, and if that leaves more than half, all
are (a flood of that many callers at once is past what a per-process limit can judge). Each
sweep frees at least half the table, so its cost is spread over as many new callers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable

MAX_BUCKETS = 50_000


class RateLimiter:
    """``take(caller)`` -> 0.0 when the request may go ahead, else the seconds until it may."""

    __slots__ = ("_buckets", "_clock", "burst", "rate")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if rate < 0 or burst < 0:
            raise ValueError("the rate and the burst cannot be negative")
        self.rate = rate
        self.burst = float(max(burst, 1))
        self._clock = clock
        # caller -> [tokens, time of the last refill]
        self._buckets: dict[Hashable, list[float]] = {}

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, caller: Hashable) -> float:
        """Take one token from ``caller``'s bucket; return 0.0, or how long to wait for one."""
        now = self._clock()
        bucket = self._buckets.get(caller)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._sweep(now)
            self._buckets[caller] = [self.burst - 1.0, now]
            return 0.0
        tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        if tokens >= 1.0:
            bucket[0] = tokens - 1.0
            return 0.0
        bucket[0] = tokens
        return (1.0 - tokens) / self.rate

    def _sweep(self, now: float) -> None:
        """Forget the callers whose buckets are full again; if most are not, forget everyone."""
        full = [c for c, (tokens, at) in self._buckets.items() if tokens + (now - at) * self.rate >= self.burst]
        for caller in full:
            del self._buckets[caller]
        if len(self._buckets) > MAX_BUCKETS // 2:
            self._buckets.clear()


def retry_after(wait_s: float) -> str:
    """The ``Retry-After`` value for a wait: whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(wait_s)))
