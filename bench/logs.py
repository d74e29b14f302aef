"""The logs store's read path (runtime/logs): "the last 1,000 lines of a workload that wrote
1,000,000", as ``cpln logs '{gvc="main", workload="web"}' --limit 1000`` asks it.

Fills a log store (real SQLite, in a temporary directory) with 1,000,000 lines of one workload
(two replicas, stdout and stderr, lines of about 80 bytes, a retention large enough to keep them
all) and 100,000 of another, then runs Loki's ``query_range`` (backward, limit 1,000, the
default hour) through ``runtime.logs.query.answer`` :data:`RUNS` times, and prints its p50 and
p99 against the target (p99 ≤ 200 ms), beside the reference: a bare SQLite query of the same
rows (``ORDER BY ts DESC LIMIT 1000`` on the same index), timed the same way.
Run: ``python -m bench.logs``.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.verdict import Target, mark
from plinth.runtime.logs.query import answer
from plinth.runtime.logs.records import Record
from plinth.runtime.logs.store import LogStore, Position

LINES = 1_000_000
OTHER = 100_000
BATCH = 50_000
RUNS = 200
LIMIT = 1000
TARGET = Target("<=", 200.0)
ORG = "acme"


def _labels(workload: str, replica: str) -> dict[str, str]:
    return {
        "org": ORG,
        "gvc": "main",
        "workload": workload,
        "container": "main",
        "location": "aws-us-east-2",
        "provider": "aws",
        "replica": replica,
    }


def fill(store: LogStore, workload: str, count: int, now_ns: int) -> None:
    """``count`` lines over the last 50 minutes, two replicas taking turns, a line in ten to stderr."""
    step = 50 * 60 * 10**9 // count
    start = now_ns - 50 * 60 * 10**9
    for first in range(0, count, BATCH):
        for replica in (0, 1):
            records = [
                Record(
                    start + i * step, "stderr" if i % 10 == 0 else "stdout", f"{i:09d} GET /api/items 200 " + "x" * 50
                )
                for i in range(first + replica, min(first + BATCH, count), 2)
            ]
            where = Position(f"/bench/{workload}-{replica}", 1, first)
            store.append(f"{workload}-{replica}", where, _labels(workload, f"{workload}-{replica}"), records)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "logs.sqlite3"
        store = LogStore(path, retention_bytes=1 << 30)
        now = time.time_ns()
        started = time.perf_counter()
        fill(store, "web", LINES, now)
        fill(store, "api", OTHER, now)
        filled = time.perf_counter() - started
        print(f"filled {LINES:,} + {OTHER:,} lines in {filled:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)")
        params = {"query": '{gvc="main", workload="web"}', "limit": str(LIMIT), "end": str(now + 10**9)}
        samples = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            status, body = answer(store, ORG, params)
            samples.append((time.perf_counter() - t0) * 1000)
            got = sum(len(s["values"]) for s in body["data"]["result"])
            if status != 200 or got != LIMIT:
                print(f"the query answered {status} with {got} lines")
                return 1
        db = sqlite3.connect(path)
        (workload,) = db.execute("SELECT id FROM workloads WHERE workload = 'web'").fetchone()
        bare = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            db.execute(
                "SELECT id, ts, stream_id, line FROM lines WHERE workload_id = ? AND ts >= ? AND ts < ? "
                "ORDER BY ts DESC, id DESC LIMIT ?",
                (workload, now - 3600 * 10**9, now + 10**9, LIMIT),
            ).fetchall()
            bare.append((time.perf_counter() - t0) * 1000)
        db.close()
        store.close()
    p50, p99 = percentiles(samples)
    b50, b99 = percentiles(bare)
    print(
        f"query_range, last {LIMIT:,} of {LINES:,} lines: p50 {p50:.1f} ms, p99 {p99:.1f} ms over {RUNS} runs "
        f"(target p99 {TARGET.describe()} ms: {mark(p99, TARGET)})"
    )
    print(f"bare SQLite query of the same rows:            p50 {b50:.1f} ms, p99 {b99:.1f} ms")
    return 0 if TARGET.met(p99) else 1


if __name__ == "__main__":
    sys.exit(main())
