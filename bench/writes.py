"""Writes at the disk's pace: Plinth's write throughput and latency against what the disk allows.

Per backend, on a fresh store: POST of a volume set and PATCH of a domain with 16 concurrent
clients (wrk, 1 and 2 workers), GET of one domain for comparison, and ``plinth apply -f`` of the
1,000-document stack (``bench.stack``) against ``cpln apply --file`` of the same stack, each to a
fresh server of its own (1 worker, then 2; the median of three pairs run back to back). The
reference for writes is SQLite's own durable single-row commit rate on the same disk (WAL,
``synchronous=FULL``, one row per transaction), measured first in the same run: the POST
figure is printed as a share of it, and the PATCH p99 beside the tail of those commits' own
latencies (no durable write is faster than its fsync, and a disk that stalls every write in
flight for 100 ms a few times a run sets the p99 alone).

Targets (``docs/write-path.md``): SQLite, 2 workers, POST ≥ 0.3 of the commit rate; PATCH p99
≤ 20 ms; apply ≤ 0.25 of cpln's time. Noisy on a shared machine: the load average is printed.
Run: ``PYTHONPATH=src:. python -m bench.writes [--quick] [--sqlite] [--postgresql]``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import client
from bench.apply import CPLN, wall_s
from bench.items import ItemKind
from bench.loadgen import Load, RequestPlan, WrkResult, ensure_wrk, run_wrk
from bench.procs import Processes
from bench.seed import seed
from bench.servers import admin_key, start_plinth
from bench.stack import large_stack
from bench.stores import BACKENDS, DEFAULT_PG_ADMIN_URL, Store, scratch_store, unavailable_reason
from bench.verdict import Target, mark, ratio

ORG = "bench"
DOMAINS = ItemKind("domain")
PATCHED = 50
POST_TARGET = Target(">=", 0.3)
PATCH_P99_TARGET = Target("<=", 20.0)
APPLY_TARGET = Target("<=", 0.25)
#: The apply's servers: ``plinth serve``'s default, and the two workers the POST figure uses.
APPLY_WORKERS = (1, 2)
#: Pairs of applies per worker count (``--quick``: one); the official CLI's own time swings by
#: 2x between runs minutes apart on a shared machine.
APPLY_ROUNDS = 3


@dataclass(frozen=True)
class DiskCommits:
    """What the disk allows a durable write: the best rate of single-row commits, and the tail
    of their latencies pooled over every run (a write acknowledged after its fsync cannot be
    faster than the fsync, so the PATCH p99 is read beside it)."""

    rate: float
    p99_ms: float
    max_ms: float
    #: Commits slower than the PATCH target, and the seconds they were counted over.
    slow: int
    seconds: float

    def describe(self) -> str:
        return (
            f"{self.rate:,.0f}/s; each p99 {self.p99_ms:.2f} ms, max {self.max_ms:.1f} ms, "
            f"{self.slow} over {PATCH_P99_TARGET.value:.0f} ms in {self.seconds:.0f} s"
        )


def durable_commits(folder: Path, runs: int = 3) -> DiskCommits:
    """Single-row commits SQLite makes durable in ``folder`` (WAL, synchronous=FULL): the best
    rate of ``runs`` 1 s runs, since other jobs' fsyncs on a shared disk only slow it, and the
    latencies of all of them."""
    rates: list[float] = []
    latencies: list[float] = []
    for _ in range(runs):
        rate, took = _commit_rate(folder, 1.0)
        rates.append(rate)
        latencies += took
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    slow = sum(1 for t in latencies if t * 1000 > PATCH_P99_TARGET.value)
    return DiskCommits(max(rates), p99 * 1000, latencies[-1] * 1000, slow, float(runs))


def _commit_rate(folder: Path, seconds: float) -> tuple[float, list[float]]:
    path = folder / "commit-rate.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT)")
    took: list[float] = []
    began = time.perf_counter()
    while (start := time.perf_counter()) - began < seconds:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (doc) VALUES (?)", ('{"name": "row"}',))
        conn.execute("COMMIT")
        took.append(time.perf_counter() - start)
    elapsed = time.perf_counter() - began
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return len(took) / elapsed, took


def prepare(procs: Processes, store: Store, logs: Path) -> str:
    """Bootstrap the org, a GVC for the volume sets and the domains' workload, seed the domains."""
    server = start_plinth(procs, store, 1, ORG, False, logs, f"{store.backend}-setup")
    try:
        key = admin_key(store)
        with client.client(server.url, key) as api:
            client.ensure_created(api, f"/org/{ORG}/gvc", {"name": "main", "spec": {}})
    finally:
        procs.stop(server.proc)
    seed(store, ORG, DOMAINS, 0, PATCHED + 1)
    return key


def plans() -> dict[str, RequestPlan]:
    return {
        "POST volumeset": RequestPlan(
            "POST", f"/org/{ORG}/gvc/main/volumeset", '{"name":"vs-', '","spec":{"initialCapacity":10}}'
        ),
        "PATCH domain": RequestPlan(
            "PATCH",
            DOMAINS.item_path(ORG, 1),
            '{"description":"bench ',
            '"}',
            tuple(DOMAINS.item_path(ORG, i) for i in range(1, 1 + PATCHED)),
        ),
        "GET domain": RequestPlan("GET", DOMAINS.item_path(ORG, 0)),
    }


def load_figures(procs: Processes, store: Store, key: str, workers: int, load: Load, logs: Path) -> dict[str, Any]:
    wrk = ensure_wrk()
    server = start_plinth(procs, store, workers, ORG, False, logs, f"{store.backend}-w{workers}")
    figures: dict[str, Any] = {}
    try:
        for label, plan in plans().items():
            headers = {"Authorization": f"Bearer {key}"}
            if plan.body_prefix is not None:
                headers["Content-Type"] = "application/json"
            run_wrk(wrk, server.url, plan, headers, Load(load.threads, load.connections, 1, load.timeout_s), logs)
            result: WrkResult = run_wrk(wrk, server.url, plan, headers, load, logs)
            errors = f"  errors {result.errors} {result.codes}" if result.errors else ""
            shown = f"{result.rps:>8,.0f} req/s  p50 {result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms{errors}"
            print(f"    {workers} worker(s)  {label:<16} {shown}", flush=True)
            figures[label] = {"rps": result.rps, "p50_ms": result.p50_ms, "p99_ms": result.p99_ms}
    finally:
        procs.stop(server.proc)
    return figures


def apply_seconds(store: Store, command: list[str], environ: dict[str, str], workers: int) -> float:
    """Wall time of ``command`` (given ``{url}`` and ``{key}``) against a fresh server on ``store``."""
    from tests.support.server import start_server

    server = start_server(store.data_dir / "apply", database_url=store.database_url, org=ORG, workers=workers)
    try:
        filled = [part.format(url=server.url, key=server.key) for part in command]
        return wall_s(filled, environ)[0]
    finally:
        server.stop()


def apply_figures(backend: str, folder: Path, pg_url: str, rounds: int = APPLY_ROUNDS) -> dict[str, Any]:
    """Both CLIs against fresh servers of 1 worker (``plinth serve``'s default), then of 2:
    ``rounds`` pairs each, plinth then cpln, and the median of the pairs' ratios."""
    manifest = folder / "large-stack.json"
    manifest.write_text(json.dumps({"kind": "list", "items": large_stack()}))
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(folder), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    tail = ["--org", ORG, "--endpoint", "{url}", "--token", "{key}"]
    runs = {"plinth apply -f": ([sys.executable, "-m", "plinth", "apply", "-f", str(manifest), *tail], base)}
    if Path(CPLN).exists():
        cpln_env = {**base, "CPLN_SKIP_UPDATE_CHECK": "1", "CPLN_HOME": str(folder / "cpln-home")}
        runs["cpln apply --file"] = ([CPLN, "apply", "--file", str(manifest), *tail], cpln_env)
    else:
        print(f"    cpln not installed at {CPLN}: no ratio (the compat tests install it)")
    figures: dict[str, Any] = {}
    for workers in APPLY_WORKERS:
        took: dict[str, list[float]] = {label: [] for label in runs}
        for round_no in range(rounds):
            for n, (label, (command, environ)) in enumerate(runs.items()):
                with scratch_store(backend, folder / f"apply-{workers}-{round_no}-{n}", pg_url) as store:
                    took[label].append(apply_seconds(store, command, environ, workers))
        for label, times in took.items():
            figures[f"{label}, {workers} worker(s)"] = times
            shown = " ".join(f"{t:.2f}" for t in times)
            print(f"    {label:<18} 1,000 documents in {shown} s ({workers} worker(s))", flush=True)
        if "cpln apply --file" in took:
            share = median_ratio(took["plinth apply -f"], took["cpln apply --file"])
            if share is not None:
                shown = f"{share:.2f} {mark(share, APPLY_TARGET)} (target {APPLY_TARGET.describe()})"
                print(f"    ratio plinth/cpln, {workers} worker(s), median of {rounds} pairs: {shown}")
    return figures


def median_ratio(ours: list[float], theirs: list[float]) -> float | None:
    """The median over pairs of ours / theirs: each pair ran back to back, so a slower stretch
    of the machine slows both sides of a pair, and one slow run moves the median little."""
    shares = [share for a, b in zip(ours, theirs, strict=True) if (share := ratio(a, b)) is not None]
    return statistics.median(shares) if shares else None


def run_backend(
    backend: str, folder: Path, pg_url: str, load: Load, disk: DiskCommits, quick: bool = False
) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    with Processes() as procs, scratch_store(backend, folder / "load", pg_url) as store:
        key = prepare(procs, store, folder)
        for workers in (1, 2):
            doc[f"workers_{workers}"] = load_figures(procs, store, key, workers, load, folder)
    two = doc["workers_2"]
    share = ratio(two["POST volumeset"]["rps"], disk.rate)
    if share is not None:
        target = POST_TARGET if backend == "sqlite" else None
        print(f"    POST, 2 workers / SQLite durable commit rate: {share:.2f} {mark(share, target)}")
    p99 = two["PATCH domain"]["p99_ms"]
    one = doc["workers_1"]["PATCH domain"]["p99_ms"]
    print(
        f"    PATCH p99, 2 workers: {p99:.1f} ms {mark(p99, PATCH_P99_TARGET)} "
        f"(1 worker {one:.1f} ms; the disk's own commits: p99 {disk.p99_ms:.2f} ms, max {disk.max_ms:.1f} ms)"
    )
    doc["apply"] = apply_figures(backend, folder, pg_url, 1 if quick else APPLY_ROUNDS)
    return doc


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    load = Load(threads=2, connections=16, duration_s=3 if quick else 8)
    pg_url = os.environ.get("PLINTH_BENCH_PG_URL", DEFAULT_PG_ADMIN_URL)
    print(f"Writes at the disk's pace ({load.describe()}; load average {os.getloadavg()[0]:.2f})", flush=True)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        disk = durable_commits(folder)
        print(f"  SQLite single-row durable commits on this disk: {disk.describe()}", flush=True)
        results["sqlite_commit_rate"] = disk.rate
        results["sqlite_commit_latency_ms"] = {"p99": disk.p99_ms, "max": disk.max_ms, "slow": disk.slow}
        chosen = [b for b in BACKENDS if f"--{b}" in argv] or list(BACKENDS)
        for backend in chosen:
            reason = unavailable_reason(backend, pg_url)
            if reason:
                print(f"  {backend}: skipped ({reason})")
                continue
            print(f"  {backend}:", flush=True)
            (folder / backend).mkdir()
            results[backend] = run_backend(backend, folder / backend, pg_url, load, disk, quick)
    print(f"  (load average at the end {os.getloadavg()[0]:.2f})")
    if out := os.environ.get("PLINTH_BENCH_WRITES_JSON"):
        Path(out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
