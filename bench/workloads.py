"""Issue 10's benchmark: a realistic workload must cost what a domain costs to serve and little
more than a volume set to create.

A realistic workload (``bench/workload_spec.py``: three containers with probes, env and
resources, two volumes, autoscaling and a firewall) on SQLite with 1 worker:

- GET of that workload as a share of the bare-ASGI ceiling serving the same bytes, measured in
  the same run (target >= 0.5, as for domains);
- POST of new workloads (each a full validation: schema, defaults, rules, links, status) as a
  share of POST of new volume sets (target >= 0.5: validation must not be the bottleneck).

Run with ``python -m bench.workloads [--backend postgresql] [--duration 5]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import httpx

from bench import client
from bench.ceiling import write_response
from bench.loadgen import Load, RequestPlan, WrkResult, ensure_wrk
from bench.procs import Processes
from bench.report import format_table
from bench.servers import admin_key, start_ceiling, start_plinth
from bench.single import main_over_backends, measure, ok
from bench.stores import scratch_store, unavailable_reason
from bench.verdict import Target, ratio
from bench.workload_spec import realistic_spec

ORG = "acme"
GVC = "main"
GET_TARGET = Target(">=", 0.5)
POST_TARGET = Target(">=", 0.5)
LOCATIONS = ["//location/aws-us-east-1", "//location/gcp-us-east1"]


def _seed(api: httpx.Client) -> str:
    """The GVC, a shared volume set and the workload the GETs read; its path."""
    ok(api.post(f"/org/{ORG}/gvc", json={"name": GVC, "spec": {"staticPlacement": {"locationLinks": LOCATIONS}}}))
    files = {"name": "files", "spec": {"initialCapacity": 10, "fileSystemType": "shared"}}
    ok(api.post(f"/org/{ORG}/gvc/{GVC}/volumeset", json=files))
    ok(api.post(f"/org/{ORG}/gvc/{GVC}/workload", json={"name": "web", "spec": realistic_spec("files")}))
    return f"/org/{ORG}/gvc/{GVC}/workload/web"


def _row(label: str, result: WrkResult, share: float | None, target: Target | None) -> list[str]:
    verdict = "" if share is None or target is None else ("PASS" if target.met(share) else "MISS")
    shown = "" if share is None else f"{share:.2f}"
    wanted = "" if target is None else target.describe()
    return [label, f"{result.rps:,.0f}", f"{result.p50_ms:.2f}", f"{result.p99_ms:.2f}", shown, wanted, verdict]


def run(backend: str, duration_s: int, pg_url: str) -> int:
    reason = unavailable_reason(backend, pg_url)
    if reason:
        print(f"workload bench skipped on {backend}: {reason}")
        return 0
    wrk = ensure_wrk()
    load = Load(duration_s=duration_s)
    # Every POST gets a unique name (wrk's token); the bodies mount no volume set, so what is
    # measured is validation and the write, not a status refresh of one set mounted by all.
    workload_suffix = '","spec":' + json.dumps(realistic_spec(), separators=(",", ":")) + "}"
    posts = {
        "volumeset": RequestPlan(
            "POST", f"/org/{ORG}/gvc/{GVC}/volumeset", '{"name":"vs-', '","spec":{"initialCapacity":10}}'
        ),
        "workload": RequestPlan("POST", f"/org/{ORG}/gvc/{GVC}/workload", '{"name":"wl-', workload_suffix),
    }
    with tempfile.TemporaryDirectory(prefix="plinth-bench-workload-") as tmp:
        workdir = Path(tmp)
        with Processes() as procs, scratch_store(backend, workdir, pg_url) as store:
            server = start_plinth(procs, store, 1, ORG, True, workdir, "plinth-workload")
            key = admin_key(store)
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as api:
                path = _seed(api)
                client.lift_quotas(api, ORG)
                recorded = client.record(api, path)
            response_file = workdir / "ceiling-workload.json"
            write_response(response_file, recorded.status, recorded.headers, recorded.body)
            ceiling_server = start_ceiling(procs, response_file, 1, workdir, "ceiling-workload")
            try:
                ceiling = measure(wrk, ceiling_server.url, None, RequestPlan("GET", path), load, workdir)
            finally:
                procs.stop(ceiling_server.proc)
            get = measure(wrk, server.url, key, RequestPlan("GET", path), load, workdir)
            post_vs = measure(wrk, server.url, key, posts["volumeset"], load, workdir)
            post_wl = measure(wrk, server.url, key, posts["workload"], load, workdir)
    rows = [
        _row("ceiling (bare ASGI, same bytes)", ceiling, None, None),
        _row("GET workload", get, ratio(get.rps, ceiling.rps), GET_TARGET),
        _row("POST volumeset", post_vs, None, None),
        _row("POST workload", post_wl, ratio(post_wl.rps, post_vs.rps), POST_TARGET),
    ]
    print(f"\nA realistic workload ({len(recorded.body):,} bytes), {backend}, 1 worker, {load.describe()}")
    print(format_table(("figure", "req/s", "p50 ms", "p99 ms", "share", "target", ""), rows))
    print("share: GET workload / ceiling; POST workload / POST volumeset, in req/s")
    return 0


def main(argv: list[str] | None = None) -> int:
    return main_over_backends("python -m bench.workloads", __doc__, run, ("sqlite",), argv)


if __name__ == "__main__":
    sys.exit(main())
