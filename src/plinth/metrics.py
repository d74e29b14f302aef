"""Every Prometheus metric Plinth exports, defined once (``/metrics``: ``server/metrics.py``).

Shared vocabulary, like ``errors.py``: the server, the engine and the storage backends record
into these, and nothing here knows about HTTP or SQL.

**Several processes, one answer.** ``plinth serve`` points ``PROMETHEUS_MULTIPROC_DIR`` at a
directory of its own, made empty at start and removed at exit, before any of its processes
imports ``prometheus_client``; every process (the server and each ``--workers`` worker) then
keeps its values in memory-mapped files there, and a scrape, whichever worker answers it, adds
up the files of them all. Without that variable (a library user, a test running the app in
its own process) values live in the process, and the same scrape shows that process alone.

**Bounded labels.** No label holds a name a client chose: requests are labelled with the route
*template* (``/org/{org}/gvc/{gvc}/workload/{name}``), the method and the status class; store
operations with the backend, a fixed operation name and an error code; commit retries with the
kind. A path no route serves is the route ``other``.

**Cost.** Adding to a shared value is a lock, a ``getpid`` and a write into a mapped page, a
microsecond or two, and a histogram observation is two of them. On the paths every request
takes (its latency, the store's operations, the record cache), values are therefore tallied in
the process and added to the shared files in bulk (:class:`HistogramTally`, :func:`flush`);
rarer events (errors, retries, rejections, connections) are added at once.
"""

from __future__ import annotations

import math
import platform
from bisect import bisect_left
from collections.abc import Callable
from typing import Any, TypeVar

from prometheus_client import Counter, Gauge, Histogram

import plinth

#: Seconds; finer than the library's default at the low end, where Plinth's requests are.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Histogram(
    "plinth_http_request_duration_seconds",
    "Requests answered, by method, route template and status class (2xx...), and how long each took",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
HTTP_CONNECTIONS = Gauge("plinth_http_connections", "Client connections open now", multiprocess_mode="livesum")
RATE_LIMITED = Counter(
    "plinth_rate_limited_requests",
    "Requests answered 429 by the rate limit, by what was limited (principal or client address)",
    ["caller"],
)
WATCHERS = Gauge("plinth_watchers", "Watch streams open now", multiprocess_mode="livesum")
STORE_OPERATIONS = Histogram(
    "plinth_store_operation_duration_seconds",
    "Store operations (a statement, a transaction), by backend and operation, and how long each took",
    ["backend", "operation"],
    buckets=LATENCY_BUCKETS,
)
STORE_ERRORS = Counter(
    "plinth_store_errors",
    "Store operations that failed, by backend, operation and code (unavailable: the store did not "
    "answer; conflict, exists, not_found: a precondition failed, as concurrent writes make happen)",
    ["backend", "operation", "code"],
)
SQLITE_COMMITS = Counter(
    "plinth_sqlite_commits",
    "Durable SQLite transactions of writes, by the process that made them (worker: a lone worker "
    "committing its own; committer: plinth serve's, committing for its several workers) and whether "
    "they held the writes of one worker or were shared by several",
    ["by", "writers"],
)
COMMIT_RETRIES = Counter(
    "plinth_commit_retries",
    "Writes run again after losing a race with a concurrent write to the same items, by kind",
    ["kind"],
)
RECORD_CACHE = Counter(
    "plinth_record_cache_requests",
    "Record reads that looked in the per-process record cache, by backend and result (hit or miss)",
    ["backend", "result"],
)
BUILD_INFO = Gauge(
    "plinth_build_info",
    "Always 1: the version of Plinth serving, its Python, and its store backend",
    ["version", "python", "store"],
    multiprocess_mode="max",
)


def announce_build(store: str) -> None:
    """Set ``plinth_build_info`` for this process (each worker does, at start)."""
    BUILD_INFO.labels(plinth.__version__, platform.python_version(), store).set(1)


class HistogramTally:
    """One label set's observations made in this process and not yet added to the shared values.

    Adding to a value in multiprocess mode takes a lock, a ``getpid`` and a write into the
    mapped file: two of those per observation (its sum and its bucket) cost a few microseconds,
    several per cent of a GET. A tally costs a bisection and two additions; :func:`flush` adds
    what it holds to the histogram, a write per bucket that moved, at most every
    :data:`FLUSH_S` in a server (``PlinthApp``) and before every scrape. Bulk additions need
    the histogram's own ``_sum`` and ``_buckets`` (prometheus_client has no public bulk observe);
    ``tests/server/test_metrics.py`` pins that a flushed tally exports what direct observations
    would."""

    __slots__ = ("_child", "counts", "total")

    def __init__(self, child: Histogram) -> None:
        self._child = child
        self.total = 0.0
        self.counts = [0] * len(_BOUNDS)

    def observe(self, seconds: float) -> None:
        self.total += seconds
        self.counts[bisect_left(_BOUNDS, seconds)] += 1

    def flush(self) -> None:
        counts = self.counts
        if not any(counts):
            return
        self._child._sum.inc(self.total)
        for bucket, n in zip(self._child._buckets, counts, strict=True):
            if n:
                bucket.inc(n)
        self.total = 0.0
        self.counts = [0] * len(_BOUNDS)


class CounterTally:
    """As :class:`HistogramTally`, for a counter."""

    __slots__ = ("_child", "pending")

    def __init__(self, child: Counter) -> None:
        self._child = child
        self.pending = 0

    def inc(self) -> None:
        self.pending += 1

    def flush(self) -> None:
        if self.pending:
            self._child.inc(self.pending)
            self.pending = 0


#: Seconds between two flushes of the tallies in a serving process: what a scrape answered by
#: one worker may lag behind the others.
FLUSH_S = 1.0
#: Histogram bucket bounds as the histogram keeps them (``+Inf`` last), for the tallies.
_BOUNDS = (*LATENCY_BUCKETS, math.inf)
_tallies: dict[tuple[object, tuple[str, ...]], HistogramTally | CounterTally] = {}
T = TypeVar("T", HistogramTally, CounterTally)


def histogram_tally(metric: Histogram, *labels: str) -> HistogramTally:
    """This process's tally of ``metric`` with ``labels`` (one per label set, kept)."""
    return _tally(metric, labels, HistogramTally)


def counter_tally(metric: Counter, *labels: str) -> CounterTally:
    return _tally(metric, labels, CounterTally)


def _tally(metric: Histogram | Counter, labels: tuple[str, ...], make: Callable[[Any], T]) -> T:
    found = _tallies.get((metric, labels))
    if found is None:
        found = _tallies[(metric, labels)] = make(metric.labels(*labels))
    return found  # type: ignore[return-value]  # one metric, one tally type


def flush() -> None:
    """Add every tally of this process to the shared values (call from the event loop)."""
    for tally in list(_tallies.values()):
        tally.flush()


class StoreMeter:
    """The store metrics of one backend: tallies of operations' latency and of the record
    cache's hits and misses, each label set's looked up once."""

    __slots__ = ("_errors", "_timers", "backend", "hits", "misses")

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.hits = counter_tally(RECORD_CACHE, backend, "hit")
        self.misses = counter_tally(RECORD_CACHE, backend, "miss")
        self._timers: dict[str, HistogramTally] = {}
        self._errors: dict[tuple[str, str], Counter] = {}

    def observe(self, operation: str, seconds: float) -> None:
        timer = self._timers.get(operation)
        if timer is None:
            timer = self._timers[operation] = histogram_tally(STORE_OPERATIONS, self.backend, operation)
        timer.observe(seconds)

    def failed(self, operation: str, code: str) -> None:
        counter = self._errors.get((operation, code))
        if counter is None:
            counter = self._errors[(operation, code)] = STORE_ERRORS.labels(self.backend, operation, code)
        counter.inc()
