"""Issue 14's backup figure: the pause ``plinth backup`` imposes on writers.

A SQLite store padded to ``--size-mb`` (rows of an org nobody reads), served by ``plinth serve``
with 1 worker; one client writes without pause (a PATCH, then the next), timing each write. The
same writer is measured first with nothing else running (the reference), then while
``plinth backup`` copies the store. Printed: write latency p50, p99 and max in both windows,
the longest write during the backup over the longest without it, and the backup's duration.

Run with ``python -m bench.backup [--size-mb 100]``.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.procs import Processes
from bench.report import format_table
from bench.servers import REPO_ROOT, admin_key, child_env, start_plinth
from bench.single import ok
from bench.stores import scratch_store
from bench.verdict import Target, ratio

ORG = "acme"
#: The longest write while a backup runs, over the longest without one.
PAUSE_TARGET = Target("<=", 3.0)
PAD_ROW_BYTES = 4000
REFERENCE_S = 3.0


def _pad(database: Path, size_mb: int) -> None:
    """Grow the store with events of an org nobody reads (written while no server runs)."""
    rows = size_mb * 1_000_000 // PAD_ROW_BYTES
    doc = '{"padding":"' + "x" * PAD_ROW_BYTES + '"}'
    with sqlite3.connect(database) as conn:
        conn.executemany(
            "INSERT INTO events (org, kind, parent, name, id, created, doc) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (("bench-padding", "gvc", "", "pad", f"pad-{i}", "2026-01-01T00:00:00Z", doc) for i in range(rows)),
        )


class Writer:
    """PATCHes one after another; each write's (start, end) on the monotonic clock."""

    def __init__(self, url: str, key: str):
        self.writes: list[tuple[float, float]] = []
        self.failed = 0
        self._stop = threading.Event()
        self._api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            began = time.monotonic()
            reply = self._api.patch(f"/org/{ORG}/gvc/written", json={"description": f"write {n}"})
            self.writes.append((began, time.monotonic()))
            self.failed += reply.status_code != 200
            n += 1

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._api.close()

    def latencies(self, start: float, end: float) -> list[float]:
        """Milliseconds of the writes that overlap ``[start, end]``, sorted."""
        return sorted((e - b) * 1000 for b, e in self.writes if e >= start and b <= end)


def _stats(latencies: list[float]) -> tuple[float, float, float]:
    def at(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))]

    return at(0.5), at(0.99), latencies[-1]


def run(size_mb: int) -> int:
    with tempfile.TemporaryDirectory(prefix="plinth-bench-backup-") as tmp:
        workdir = Path(tmp)
        with Processes() as procs, scratch_store("sqlite", workdir, "") as store:
            server = start_plinth(procs, store, 1, ORG, False, workdir, "plinth-backup")
            procs.stop(server.proc)
            _pad(store.data_dir / "plinth.db", size_mb)
            server = start_plinth(procs, store, 1, ORG, False, workdir, "plinth-backup")
            key = admin_key(store)
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as api:
                ok(api.post(f"/org/{ORG}/gvc", json={"name": "written"}))
            output = workdir / "backup.db"
            argv = [sys.executable, "-m", "plinth", "backup", "--data-dir", str(store.data_dir), "-o", str(output)]
            with Writer(server.url, key) as writer:
                time.sleep(1.0)  # warm up
                reference_start = time.monotonic()
                time.sleep(REFERENCE_S)
                reference_end = backup_start = time.monotonic()
                subprocess.run(argv, check=True, capture_output=True, cwd=REPO_ROOT, env=child_env())
                backup_end = time.monotonic()
                time.sleep(0.5)
            if writer.failed:
                raise RuntimeError(f"{writer.failed} writes failed")
            backed_up_mb = output.stat().st_size / 1e6
    reference = _stats(writer.latencies(reference_start, reference_end))
    during = _stats(writer.latencies(backup_start, backup_end))
    share = ratio(during[2], reference[2])
    verdict = "" if share is None else ("PASS" if PAUSE_TARGET.met(share) else "MISS")
    rows = [
        ["writes, nothing else running", *(f"{v:.2f}" for v in reference), "", "", ""],
        [
            "writes during plinth backup",
            *(f"{v:.2f}" for v in during),
            "" if share is None else f"{share:.2f}",
            PAUSE_TARGET.describe(),
            verdict,
        ],
    ]
    print(f"\nplinth backup of a {backed_up_mb:.0f} MB SQLite store under writes, in {backup_end - backup_start:.2f} s")
    print(format_table(("figure", "p50 ms", "p99 ms", "max ms", "max / max", "target", ""), rows))
    print("max / max: the longest write during the backup over the longest without it (the backup's pause)")
    print("the backup's time includes starting the plinth command (about 0.3 s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.backup", description=__doc__)
    parser.add_argument("--size-mb", type=int, default=100, help="the store's size (default 100)")
    return run(parser.parse_args(argv).size_mb)


if __name__ == "__main__":
    sys.exit(main())
