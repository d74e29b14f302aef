"""Issue 6's benchmark: GET one domain and POST a volume set with 1, 2 and 3 ``plinth serve``
replicas (one worker each) on one PostgreSQL, as a load balancer would spread them: one wrk per
replica, run at the same time, their throughput summed. Prints the scaling against one replica.

This machine has 2 cores shared by the replicas, PostgreSQL and wrk, so linear scaling is not
on offer: the report says how far from it each figure is, and the per-core efficiency.
Run with ``python -m bench.replicas``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.loadgen import Load, RequestPlan, WrkResult, ensure_wrk, run_wrk
from bench.procs import Processes
from bench.report import format_table
from bench.servers import Running, admin_key, start_plinth
from bench.stores import DEFAULT_PG_ADMIN_URL, scratch_store, unavailable_reason

ORG = "acme"
DOMAIN = "replicas.example.com"


def _seed(url: str, key: str) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as api:
        for path, body in (
            (f"/org/{ORG}/gvc", {"name": "main"}),
            (
                f"/org/{ORG}/domain",
                {
                    "name": DOMAIN,
                    "spec": {"ports": [{"routes": [{"prefix": "/", "workloadLink": "//gvc/main/workload/w"}]}]},
                },
            ),
        ):
            r = api.post(path, json=body)
            if r.status_code != 201:
                raise RuntimeError(f"seeding {path}: {r.status_code} {r.text[:200]}")


def _together(
    wrk: str, servers: list[Running], plan: RequestPlan, key: str, load: Load, workdir: Path
) -> list[WrkResult]:
    headers = {"Authorization": f"Bearer {key}"}
    if plan.body_prefix is not None:
        headers["Content-Type"] = "application/json"
    with ThreadPoolExecutor(len(servers)) as pool:
        return list(pool.map(lambda s: run_wrk(wrk, s.url, plan, headers, load, workdir), servers))


def run(pg_url: str, duration_s: int, max_replicas: int) -> int:
    reason = unavailable_reason("postgresql", pg_url)
    if reason:
        print(f"replica bench skipped: {reason}")
        return 0
    wrk = ensure_wrk()
    # One wrk per replica: split the connections so the total offered load stays the same.
    plans = {
        "GET one domain": RequestPlan("GET", f"/org/{ORG}/domain/{DOMAIN}"),
        "POST a volume set": RequestPlan(
            "POST", f"/org/{ORG}/gvc/main/volumeset", '{"name":"vs-', '","spec":{"initialCapacity":10}}'
        ),
    }
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="plinth-bench-replicas-") as tmp:
        workdir = Path(tmp)
        with Processes() as procs, scratch_store("postgresql", workdir, pg_url) as store:
            servers = [start_plinth(procs, store, 1, ORG, True, workdir, "replica-0")]
            key = admin_key(store)
            _seed(servers[0].url, key)
            for n in range(2, max_replicas + 1):
                servers.append(start_plinth(procs, store, 1, ORG, True, workdir, f"replica-{n - 1}"))
            base: dict[str, float] = {}
            for n in range(1, max_replicas + 1):
                load = Load(threads=1, connections=max(1, 4 // n), duration_s=duration_s)
                for label, plan in plans.items():
                    _together(wrk, servers[:n], plan, key, Load(1, load.connections, 1), workdir)  # warm-up
                    results = _together(wrk, servers[:n], plan, key, load, workdir)
                    rps = sum(r.rps for r in results)
                    errors = sum(r.errors for r in results)
                    base.setdefault(label, rps)
                    speedup = rps / base[label]
                    cores = min(n, os.cpu_count() or 1)
                    rows.append([
                        label, str(n), f"{rps:,.0f}", f"{max(r.p50_ms for r in results):.2f}",
                        f"{speedup:.2f}x", f"{speedup / n:.0%}", f"{speedup / cores:.0%}", str(errors),
                    ])  # fmt: skip
    print(f"\nReplicas on one PostgreSQL ({os.cpu_count()} cores, shared with PostgreSQL and wrk)")
    header = ("operation", "replicas", "req/s", "worst p50 ms", "vs 1", "of linear", "per core", "errors")
    print(format_table(header, rows))
    print(
        "Per core: the speed-up divided by the cores the replicas can use (at most this machine's).\n"
        "Far from linear here because the replicas, PostgreSQL and wrk share the same two cores:\n"
        "a second replica can use the second core, a third only competes with the others."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__)
    parser.add_argument("--duration", type=int, default=5, help="seconds per figure (default 5)")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--pg-url", default=DEFAULT_PG_ADMIN_URL)
    args = parser.parse_args(argv)
    return run(args.pg_url, args.duration, args.replicas)


if __name__ == "__main__":
    sys.exit(main())
