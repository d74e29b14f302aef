"""Command-line options of ``python -m bench``."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from bench.items import KINDS
from bench.loadgen import Load
from bench.stores import BACKENDS, DEFAULT_PG_ADMIN_URL

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Options:
    backends: tuple[str, ...]
    workers: tuple[int, ...]
    small: int
    large: int
    deep_page: int
    load: Load
    warmup_s: int
    kind: str
    org: str
    access_log: bool
    pg_admin_url: str
    keep: bool
    results_dir: Path
    quick: bool
    settle_budget_s: float
    walk_deadline_s: float


def parse(argv: list[str]) -> Options:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Load Plinth with wrk over loopback and compare it with a bare ASGI ceiling.",
    )
    p.add_argument("--quick", action="store_true", help="2 s per figure and 10,000 items instead of 100,000")
    p.add_argument("--backend", action="append", choices=BACKENDS, help="repeatable; default: both")
    p.add_argument("--workers", action="append", type=int, help="repeatable; default: 1 and 2")
    p.add_argument("--items", type=int, help="items stored for the scale figures (default 100,000; quick 10,000)")
    p.add_argument("--small", type=int, default=1000, help="items stored for the main table (default 1,000)")
    p.add_argument("--deep-page", type=int, default=1000, help="the deep list page (default 1,000)")
    p.add_argument("--duration", type=int, help="seconds per figure (default 5; quick 2)")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--connections", type=int, default=4, help="wrk connections (default 4)")
    p.add_argument("--kind", choices=KINDS, default="domain", help="the item kind under test (default domain)")
    p.add_argument("--org", default="acme")
    p.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run Plinth with its JSON access log (the default, as users run it; stderr goes to a file)",
    )
    p.add_argument(
        "--pg-url",
        default=os.environ.get("PLINTH_BENCH_PG_URL", DEFAULT_PG_ADMIN_URL),
        help="a PostgreSQL database to connect to for creating scratch plinth_bench_* databases",
    )
    p.add_argument(
        "--settle-budget",
        type=float,
        default=90.0,
        help="seconds the whole run may wait for other processes to go quiet before figures (default 90)",
    )
    p.add_argument(
        "--walk-deadline",
        type=float,
        default=150.0,
        help="seconds allowed for following next links to the deep page (default 150)",
    )
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs, stores)")
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    a = p.parse_args(argv)
    large = a.items if a.items is not None else (10_000 if a.quick else 100_000)
    duration = a.duration if a.duration is not None else (2 if a.quick else 5)
    # PATCH goes to items 1..50 in turn, so the small store needs more than 50.
    if a.small <= 50 or large < a.small:
        p.error("need 50 < --small <= --items")
    if a.connections < a.threads:
        p.error("wrk needs at least one connection per thread")
    workers = tuple(dict.fromkeys(a.workers or (1, 2)))
    if any(w < 1 for w in workers):
        p.error("--workers must be positive")
    return Options(
        backends=tuple(dict.fromkeys(a.backend or BACKENDS)),
        workers=workers,
        small=a.small,
        large=large,
        deep_page=a.deep_page,
        load=Load(threads=a.threads, connections=a.connections, duration_s=max(1, duration)),
        warmup_s=1,
        kind=a.kind,
        org=a.org,
        access_log=a.access_log,
        pg_admin_url=a.pg_url,
        keep=a.keep,
        results_dir=a.results_dir,
        quick=a.quick,
        settle_budget_s=max(0.0, a.settle_budget),
        walk_deadline_s=max(1.0, a.walk_deadline),
    )
