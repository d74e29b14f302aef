"""Issue 3's benchmark: the cost of policy decisions on the GET hot path.

GET one domain as a service account whose access comes through a group (by link) and a policy
by query, with 1,000 policies and 100 groups in the org, as a ratio to the same GET when the
account's access comes through the built-ins only (the ``viewers`` group and ``viewers-domain``).
Target: at most 1.2x (verified keys and decisions are cached; the caches are invalidated when
the access generation moves). Run with ``python -m bench.authz [--backend postgresql]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import httpx

from bench.loadgen import Load, RequestPlan, WrkResult, ensure_wrk
from bench.procs import Processes
from bench.report import format_table
from bench.servers import admin_key, start_plinth
from bench.single import main_over_backends, measure, ok
from bench.stores import scratch_store, unavailable_reason

ORG = "acme"
POLICIES = 1000
GROUPS = 100
TARGET = 1.2
DOMAIN = "bench.example.com"


def _seed_reader(api: httpx.Client) -> str:
    ok(api.post(f"/org/{ORG}/gvc", json={"name": "main"}))
    route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
    body = {"name": DOMAIN, "tags": {"bench": "authz"}, "spec": {"ports": [{"routes": [route]}]}}
    ok(api.post(f"/org/{ORG}/domain", json=body))
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": "reader"}))
    return str(ok(api.post(f"/org/{ORG}/serviceaccount/reader/-addKey", json={"description": "bench"}))["key"])


def _many_policies(api: httpx.Client) -> None:
    """100 groups (the reader in one of them) and 1,000 policies; one grants view by query."""
    for g in range(GROUPS):
        members = ["//serviceaccount/reader"] if g == GROUPS // 2 else []
        ok(api.post(f"/org/{ORG}/group", json={"name": f"team-{g:03d}", "memberLinks": members}))
    kinds = ("domain", "gvc", "volumeset", "serviceaccount", "group", "policy")
    for p in range(POLICIES - 1):
        kind = kinds[p % len(kinds)]
        body = {
            "name": f"p-{p:04d}",
            "targetKind": kind,
            "targetQuery": {"spec": {"terms": [{"tag": "owner", "value": f"team-{p % GROUPS:03d}"}]}},
            "bindings": [{"permissions": ["view"], "principalLinks": [f"//group/team-{(p + 1) % GROUPS:03d}"]}],
        }
        ok(api.post(f"/org/{ORG}/policy", json=body))
    grant = {
        "name": "p-reader",
        "targetKind": "domain",
        "targetQuery": {"spec": {"terms": [{"tag": "bench", "value": "authz"}]}},
        "bindings": [{"permissions": ["view"], "principalLinks": [f"//group/team-{GROUPS // 2:03d}"]}],
    }
    ok(api.post(f"/org/{ORG}/policy", json=grant))


def _measure(wrk: str, url: str, key: str, load: Load, workdir: Path) -> WrkResult:
    return measure(wrk, url, key, RequestPlan("GET", f"/org/{ORG}/domain/{DOMAIN}"), load, workdir)


def run(backend: str, duration_s: int, pg_url: str) -> int:
    reason = unavailable_reason(backend, pg_url)
    if reason:
        print(f"authz bench skipped on {backend}: {reason}")
        return 0
    wrk = ensure_wrk()
    load = Load(duration_s=duration_s)
    with tempfile.TemporaryDirectory(prefix="plinth-bench-authz-") as tmp:
        workdir = Path(tmp)
        with Processes() as procs, scratch_store(backend, workdir, pg_url) as store:
            server = start_plinth(procs, store, 1, ORG, True, workdir, "plinth-authz")
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {admin_key(store)}"}) as api:
                key = _seed_reader(api)
                ok(api.patch(f"/org/{ORG}/group/viewers", json={"$append/memberLinks": ["//serviceaccount/reader"]}))
                builtin = _measure(wrk, server.url, key, load, workdir)
                ok(api.patch(f"/org/{ORG}/group/viewers", json={"$drop/memberLinks": ["//serviceaccount/reader"]}))
                _many_policies(api)
                many = _measure(wrk, server.url, key, load, workdir)
    ratio_rps = builtin.rps / many.rps if many.rps else float("inf")
    ratio_p50 = many.p50_ms / builtin.p50_ms if builtin.p50_ms else float("inf")
    rows = [
        [
            "built-in policies only (viewers group)",
            f"{builtin.rps:,.0f}",
            f"{builtin.p50_ms:.2f}",
            f"{builtin.p99_ms:.2f}",
        ],
        [
            f"{POLICIES} policies, {GROUPS} groups (group + query)",
            f"{many.rps:,.0f}",
            f"{many.p50_ms:.2f}",
            f"{many.p99_ms:.2f}",
        ],
    ]
    print(f"\nGET one domain as a service account, {backend}, 1 worker, {load.describe()}")
    print(format_table(("access through", "req/s", "p50 ms", "p99 ms"), rows))
    verdict = "PASS" if max(ratio_rps, ratio_p50) <= TARGET else "MISS"
    print(f"cost of 1,000 policies: {ratio_rps:.2f}x in req/s, {ratio_p50:.2f}x in p50 (target <= {TARGET}x) {verdict}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return main_over_backends("python -m bench.authz", __doc__, run, ("sqlite", "postgresql"), argv)


if __name__ == "__main__":
    sys.exit(main())
