"""Issue 12's benchmark: watches (docs/watch.md).

On SQLite with 1 worker, 1,000 watchers of one kind (held by one client process with raw
asyncio sockets, so they cost little on the client side):

- the p50 and p99 delay from a PATCH's answer to its event reaching all 1,000 watchers
  (target p99 <= 100 ms), over paced writes;
- memory per idle watcher: the server's RSS with them connected and idle, less its RSS
  before, over their number (target <= 20 KB);
- PATCH throughput (wrk) with the 1,000 watchers attached, as a share of the same run without
  them (target >= 0.8).

On PostgreSQL with 2 replicas: the same delay, writes through one replica and the 1,000 watchers
on the other. Everything is bounded in count and time and stops by itself; the servers listen
on loopback only. Run with ``python -m bench.watch [--backend sqlite|postgresql] [--duration 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.loadgen import Load, RequestPlan, ensure_wrk
from bench.procs import Processes, rss_mb
from bench.report import format_table
from bench.servers import Running, admin_key, start_plinth
from bench.single import measure, ok
from bench.stores import DEFAULT_PG_ADMIN_URL, scratch_store, unavailable_reason
from bench.verdict import Target, ratio

ORG = "acme"
WATCHERS = 1000
#: Items the throughput load patches in turn.
SPREAD = 20
#: Watchers opened at a time.
WAVE = 50
#: Paced writes whose delay is measured, and the pause between them.
DELAY_WRITES = 100
DELAY_PAUSE_S = 0.05
#: Where a paced write's number starts in an event (PostgreSQL's jsonb text has spaces after
#: colons, SQLite's does not: the value's opening quote is all they share).
MARKER = b'"bench-'
DELAY_TARGET = Target("<=", 100.0)
MEMORY_TARGET = Target("<=", 20.0)
THROUGHPUT_TARGET = Target(">=", 0.8)
SERVER_ARGS = ("--watch-limit", str(WATCHERS * 2), "--watch-bookmark-interval", "60")
#: Seconds the watchers may take to connect, and the whole watcher process to finish.
CONNECT_LIMIT_S = 60.0
RUN_LIMIT_S = 600.0


class _Watch(asyncio.Protocol):
    """One raw watch connection: notes when each ``bench-N`` description arrives."""

    def __init__(self, arrivals: dict[int, list[float]], ready: asyncio.Future[None], counter: list[int]):
        self.arrivals = arrivals
        self.ready = ready
        self.counter = counter
        self.tail = b""
        self.started = False

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        if b'"ERROR"' in data:
            self.counter[1] += 1  # cut off (watch_too_slow) or ended: no longer attached
        if not self.started and b"BOOKMARK" in data:
            self.started = True
            self.counter[0] += 1
            if self.counter[0] == WATCHERS and not self.ready.done():
                self.ready.set_result(None)
        buf = self.tail + data
        start = 0
        while (at := buf.find(MARKER, start)) >= 0:
            end = buf.find(b'"', at + len(MARKER))
            if end < 0:
                break
            if end >= len(self.tail):  # not already counted from the previous chunk
                n = int(buf[at + len(MARKER) : end])
                entry = self.arrivals.setdefault(n, [0, 0.0])
                entry[0] += 1
                entry[1] = max(entry[1], now)
            start = end
        self.tail = buf[-64:]


async def _hold(url: str, key: str, path: str, conn: multiprocessing.connection.Connection) -> None:
    """Open the watchers, say so, hold them until told to stop, then send the arrivals."""
    loop = asyncio.get_running_loop()
    host, port = url.removeprefix("http://").split(":")
    arrivals: dict[int, list[float]] = {}
    ready: asyncio.Future[None] = loop.create_future()
    counter = [0, 0]
    request = f"GET {path}?watch=true HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\r\n".encode()
    transports = []
    deadline = time.monotonic() + CONNECT_LIMIT_S
    for _ in range(WATCHERS // WAVE):
        # In waves, as clients arrive in practice: the memory figure is what idle watchers hold,
        # not the peak of a thousand requests served in the same instant.
        for _ in range(WAVE):
            transport, _ = await loop.create_connection(lambda: _Watch(arrivals, ready, counter), host, int(port))
            transport.write(request)
            transports.append(transport)
        while counter[0] < len(transports):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{counter[0]} of {WATCHERS} watchers connected")
            await asyncio.sleep(0.01)
    await asyncio.wait_for(ready, CONNECT_LIMIT_S)
    conn.send("ready")
    while not conn.poll():
        await asyncio.sleep(0.05)
    conn.recv()
    for transport in transports:
        transport.close()
    conn.send(({n: tuple(v) for n, v in arrivals.items()}, counter[1]))


def _watcher_process(url: str, key: str, path: str, conn: multiprocessing.connection.Connection) -> None:
    import uvloop  # the client's own cost per event is part of every delay measured: keep it low

    uvloop.run(_hold(url, key, path, conn))


class Watchers:
    """The 1,000 watchers in a process of their own."""

    def __init__(self, url: str, key: str, path: str):
        self._conn, child = multiprocessing.Pipe()
        self._proc = multiprocessing.get_context("spawn").Process(
            target=_watcher_process, args=(url, key, path, child), daemon=True
        )
        self._proc.start()
        #: Watchers whose stream ended (an ERROR: cut off for reading too slowly) before stop.
        self.ended = 0
        if not self._conn.poll(CONNECT_LIMIT_S) or self._conn.recv() != "ready":
            self._proc.kill()
            raise RuntimeError(f"{WATCHERS} watchers did not connect within {CONNECT_LIMIT_S:.0f} s")

    def stop(self) -> dict[int, tuple[int, float]]:
        """The arrivals of each paced write: how many watchers got it, and when the last did."""
        self._conn.send("stop")
        if not self._conn.poll(RUN_LIMIT_S):
            self._proc.kill()
            raise RuntimeError("the watcher process did not report")
        arrivals, self.ended = self._conn.recv()
        self._proc.join(10)
        return arrivals  # type: ignore[no-any-return]


def _server_rss_kb(server: Running) -> float:
    pids = {server.proc.pid, *server.workers()}  # with 1 worker, uvicorn serves in the process itself
    return sum(rss_mb(pid) or 0.0 for pid in pids) * 1000


def _paced_writes(api: httpx.Client, path: str) -> dict[int, float]:
    answered: dict[int, float] = {}
    for n in range(DELAY_WRITES):
        ok(api.patch(path, json={"description": f"bench-{n}"}))
        answered[n] = time.monotonic()
        time.sleep(DELAY_PAUSE_S)
    time.sleep(1.0)  # the last write's events on their way (a miss is one that never arrives)
    return answered


def _delays(answered: dict[int, float], arrivals: dict[int, tuple[int, float]]) -> tuple[float, float, int]:
    """p50 and p99 (ms) of answer -> last of the watchers, and how many writes some watcher missed."""
    delays, missed = [], 0
    for n, at in answered.items():
        count, last = arrivals.get(n, (0, 0.0))
        if count < WATCHERS:
            missed += 1
            continue
        delays.append(max(0.0, last - at) * 1000)
    if not delays:
        return float("nan"), float("nan"), missed
    delays.sort()
    return statistics.median(delays), delays[min(len(delays) - 1, int(len(delays) * 0.99))], missed


def _row(label: str, value: float, unit: str, target: Target | None) -> list[str]:
    verdict = "" if target is None else ("PASS" if target.met(value) else "MISS")
    return [label, f"{value:,.2f} {unit}", "" if target is None else target.describe(), verdict]


def run_sqlite(duration_s: int, pg_url: str) -> list[list[str]]:
    wrk = ensure_wrk()
    load = Load(duration_s=duration_s)
    with tempfile.TemporaryDirectory(prefix="plinth-bench-watch-") as tmp:
        workdir = Path(tmp)
        with Processes() as procs, scratch_store("sqlite", workdir, pg_url) as store:
            server = start_plinth(procs, store, 1, ORG, False, workdir, "plinth-watch", SERVER_ARGS)
            key = admin_key(store)
            item = f"/org/{ORG}/gvc/watched"
            # Over several items in turn: wrk's connections patching one item would measure the
            # engine's compare-and-swap retries, not write throughput (as bench/scenario.py).
            spread = tuple(f"{item}-{n}" for n in range(SPREAD))
            plan = RequestPlan("PATCH", item, '{"description":"load-', '"}', spread)
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as api:
                for name in ("watched", *(f"watched-{n}" for n in range(SPREAD))):
                    ok(api.post(f"/org/{ORG}/gvc", json={"name": name}))
                alone = measure(wrk, server.url, key, plan, load, workdir)
                before = _server_rss_kb(server)
                watchers = Watchers(server.url, key, f"/org/{ORG}/gvc")
                try:
                    time.sleep(1.0)
                    per_watcher = (_server_rss_kb(server) - before) / WATCHERS
                    answered = _paced_writes(api, item)
                    watched = measure(wrk, server.url, key, plan, load, workdir)
                finally:
                    arrivals = watchers.stop()
                # Without watchers again: the machine's load drifts (shared cores), so the
                # reference is the mean of a run before and a run after.
                alone_after = measure(wrk, server.url, key, plan, load, workdir)
    p50, p99, missed = _delays(answered, arrivals)
    reference = (alone.rps + alone_after.rps) / 2
    share = ratio(watched.rps, reference) or 0.0
    return [
        _row(f"SQLite, delay p50 ({WATCHERS} watchers)", p50, "ms", None),
        _row(f"SQLite, delay p99 ({WATCHERS} watchers)", p99, "ms", DELAY_TARGET),
        _row("SQLite, writes some watcher missed", missed, "", Target("<=", 0)),
        _row("SQLite, memory per idle watcher", per_watcher, "KB", MEMORY_TARGET),
        _row("SQLite, PATCH req/s without watchers (before, after)", alone.rps, f"/ {alone_after.rps:,.0f}", None),
        _row(f"SQLite, PATCH req/s with {WATCHERS} watchers", watched.rps, "", None),
        _row("SQLite, throughput with / without", share, "", THROUGHPUT_TARGET),
        _row("SQLite, watchers cut off under the load", watchers.ended, "", None),
    ]


def run_postgres(duration_s: int, pg_url: str) -> list[list[str]]:
    reason = unavailable_reason("postgresql", pg_url)
    if reason:
        print(f"watch bench on PostgreSQL skipped: {reason}")
        return []
    with tempfile.TemporaryDirectory(prefix="plinth-bench-watch-pg-") as tmp:
        workdir = Path(tmp)
        with Processes() as procs, scratch_store("postgresql", workdir, pg_url) as store:
            writer = start_plinth(procs, store, 1, ORG, False, workdir, "replica-0", SERVER_ARGS)
            key = admin_key(store)
            reader = start_plinth(procs, store, 1, ORG, False, workdir, "replica-1", SERVER_ARGS)
            item = f"/org/{ORG}/gvc/watched"
            with httpx.Client(base_url=writer.url, headers={"Authorization": f"Bearer {key}"}) as api:
                ok(api.post(f"/org/{ORG}/gvc", json={"name": "watched"}))
                watchers = Watchers(reader.url, key, f"/org/{ORG}/gvc")
                try:
                    answered = _paced_writes(api, item)
                finally:
                    arrivals = watchers.stop()
    p50, p99, missed = _delays(answered, arrivals)
    return [
        _row(f"PostgreSQL 2 replicas, delay p50 ({WATCHERS} watchers on the other)", p50, "ms", None),
        _row(f"PostgreSQL 2 replicas, delay p99 ({WATCHERS} watchers on the other)", p99, "ms", DELAY_TARGET),
        _row("PostgreSQL 2 replicas, writes some watcher missed", missed, "", Target("<=", 0)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.watch", description=__doc__)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), action="append")
    parser.add_argument("--duration", type=int, default=5, help="seconds per throughput figure (default 5)")
    parser.add_argument("--pg-url", default=DEFAULT_PG_ADMIN_URL)
    args = parser.parse_args(argv)
    rows: list[list[str]] = []
    for backend in args.backend or ["sqlite", "postgresql"]:
        run = run_sqlite if backend == "sqlite" else run_postgres
        rows += run(args.duration, args.pg_url)
    print(f"\nWatches: {WATCHERS} watchers, {DELAY_WRITES} paced PATCHes (delay), wrk PATCH (throughput)")
    print(format_table(("figure", "measured", "target", ""), rows))
    print("delay: from a PATCH's answer to its event at the last of the watchers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
