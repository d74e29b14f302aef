"""What the single-figure benches (``bench.authz``, ``bench.workloads``) share: checking a setup
request, one warmed-up wrk measurement that must not fail, and the command line over backends."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from bench.loadgen import Load, RequestPlan, WrkResult, run_wrk
from bench.stores import DEFAULT_PG_ADMIN_URL


def ok(reply: httpx.Response) -> Any:
    """The JSON of a setup request's answer (``{}`` when empty); raise unless it succeeded."""
    if reply.status_code >= 300:
        raise RuntimeError(f"{reply.request.method} {reply.request.url} -> {reply.status_code}: {reply.text[:300]}")
    return reply.json() if reply.content else {}


def measure(wrk: str, url: str, key: str | None, plan: RequestPlan, load: Load, workdir: Path) -> WrkResult:
    """A one-second warm-up (discarded), then the measured run; any failed request is an error."""
    headers = {"Content-Type": "application/json"} if plan.body_prefix is not None else {}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    run_wrk(wrk, url, plan, headers, Load(load.threads, load.connections, 1, load.timeout_s), workdir)
    result = run_wrk(wrk, url, plan, headers, load, workdir)
    if result.errors:
        raise RuntimeError(f"{result.errors} failed requests while measuring {plan.method} {plan.path}")
    return result


def main_over_backends(
    prog: str,
    description: str | None,
    run: Callable[[str, int, str], int],
    default_backends: Sequence[str],
    argv: list[str] | None = None,
) -> int:
    """``--backend`` (repeatable), ``--duration`` and ``--pg-url``; ``run`` once per backend."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), action="append")
    parser.add_argument("--duration", type=int, default=5, help="seconds per figure (default 5)")
    parser.add_argument("--pg-url", default=DEFAULT_PG_ADMIN_URL)
    args = parser.parse_args(argv)
    for backend in args.backend or list(default_backends):
        run(backend, args.duration, args.pg_url)
    return 0
