"""The container runtime's figures (issue 22, "Benchmark"), each against a reference measured in
the same run: ``python -m bench.runtime [--writes N] [--idle N] [--window S]``.

The parts are the real ones on main: the control loop and its informer against a real ``plinth
serve`` (SQLite), the podman driver with the tests' ``CONTAINERS_CONF`` and image, Caddy as the
gateway (``bench.runtime_stage``). Everything is on 127.0.0.1; every container carries the run's
``plinth.test-run`` label and is removed at the end, also on failure.

1. **Write → engine delay.** ``N`` PATCHes (default 20), each changing one env value of a
   one-replica workload, one after the other once the previous rollout settled. The delay is
   from sending the PATCH to the engine's ``create`` event of the new container (podman's own
   time stamp, ``bench.runtime_events``); its ``start`` event is shown too. p50 and p99 against
   the target p99 ≤ 1 s.
2. **Gateway throughput.** wrk (``bench.loadgen``, same load, loopback) against the workload's
   endpoint through Caddy (``Host: {workload}-{alias}.localhost``), and against the same
   container on its published port: the ratio gateway / direct, target ≥ 0.5.
3. **Controller CPU.** Cores (CPU seconds per wall second) of the controller's process over a
   quiet window, and of the podman commands it ran (its reaped children), with the workloads of
   1. and 2. running (the reference), then with ``--idle`` (default 50) workloads running.
4. **apply --ready** (``bench.runtime_apply``): runs once ``plinth serve --runtime containers``
   exists, else says why not.

Skipped, saying why, when podman, runc, busybox-static or caddy are missing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bench import runtime_apply
from bench.cpu import TICKS
from bench.loadgen import Load, RequestPlan, WrkResult, ensure_wrk, run_wrk
from bench.report import format_table
from bench.runtime_stage import GVC, Stage, missing_tools, stage, until
from bench.verdict import Target, mark, ratio
from plinth.runtime.containers.protocol import WORKLOAD

DELAY_TARGET = Target("<=", 1.0)
THROUGHPUT_TARGET = Target(">=", 0.5)
LOAD = Load(threads=2, connections=8, duration_s=5)
SETTLE_S = 3.0  # no engine event for this long: the controller is done acting


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class Delays:
    create_s: list[float]
    start_s: list[float]


def write_delays(st: Stage, writes: int) -> Delays:
    """Figure 1: PATCH env, then the engine's create (and start) of the new container."""
    name = "delay"
    st.create(st.workload(name, env={"ROUND": "0"}, cpu="1000m"))
    st.settled(name)
    creates, starts = [], []
    for n in range(1, writes + 1):
        containers = st.workload(name, env={"ROUND": str(n)}, cpu="1000m")["spec"]["containers"]
        sent = time.time()
        reply = st.api.patch(f"/org/{st.org}/gvc/{GVC}/workload/{name}", json={"spec": {"containers": containers}})
        if reply.status_code != 200:
            raise RuntimeError(f"PATCH {name}: {reply.status_code} {reply.text[:300]}")
        created = st.events.first("create", {WORKLOAD: name}, sent, 60)
        started = st.events.first("start", {WORKLOAD: name}, sent, 60)
        creates.append(created.at - sent)
        starts.append(started.at - sent)
        new_name = created.name

        def rolled(wanted: str = new_name) -> bool:
            return st.settled(name).name == wanted

        until(rolled, f"the rollout of write {n} settled")
    return Delays(creates, starts)


def throughput(st: Stage, work: Path) -> tuple[WrkResult, WrkResult]:
    """Figure 2: the same wrk load direct to the published port, then through the gateway."""
    name = "delay"
    port = st.settled(name).ports[8080]
    host = st.host(name)
    gateway_url = f"http://{st.listen}"

    def through_gateway() -> bool:
        try:
            return httpx.get(gateway_url + "/", headers={"Host": host}, timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    until(through_gateway, f"200 from {host} through the gateway", pause_s=0.2)
    wrk = ensure_wrk()
    plan = RequestPlan("GET", "/")
    direct = run_wrk(wrk, f"http://127.0.0.1:{port}", plan, {}, LOAD, work)
    via = run_wrk(wrk, gateway_url, plan, {"Host": host}, LOAD, work)
    return direct, via


@dataclass(frozen=True)
class Cpu:
    workloads: int
    window_s: float
    controller_cores: float
    podman_cores: float


def quiet(st: Stage) -> None:
    """Wait until the engine has had no event of the run for :data:`SETTLE_S`."""
    until(lambda: st.events.quiet_for() >= SETTLE_S, "the engine quiet", pause_s=0.5)


def idle_cpu(st: Stage, window_s: float) -> Cpu:
    """Figure 3: the controller's cores (and its podman commands') over a quiet window."""
    quiet(st)
    workloads = len(st.containers())
    own, children = st.cpu_ticks()
    began = time.monotonic()
    time.sleep(window_s)
    own2, children2 = st.cpu_ticks()
    took = time.monotonic() - began
    return Cpu(workloads, took, (own2 - own) / TICKS / took, (children2 - children) / TICKS / took)


def start_idle(st: Stage, count: int) -> float:
    """``count`` one-replica workloads in all, each running its container; seconds it took."""
    began = time.monotonic()
    have = {c.labels.get(WORKLOAD) for c in st.containers()}
    for n in range(count - len(have)):
        st.create(st.workload(f"idle-{n:02d}"))
    until(
        lambda: len([c for c in st.containers() if c.running]) >= count,
        f"{count} running containers",
        timeout_s=600,
        pause_s=1.0,
    )
    return time.monotonic() - began


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


def report(delays: Delays, direct: WrkResult, via: WrkResult, cpus: list[Cpu]) -> None:
    p99 = quantile(delays.create_s, 0.99)
    print(f"Write → engine delay ({len(delays.create_s)} PATCHes of env, one replica, podman events)")
    rows = [
        [
            "PATCH → create",
            _ms(quantile(delays.create_s, 0.5)),
            _ms(p99),
            _ms(max(delays.create_s)),
            DELAY_TARGET.describe() + " s (p99)",
            mark(p99, DELAY_TARGET),
        ],
        [
            "PATCH → start",
            _ms(quantile(delays.start_s, 0.5)),
            _ms(quantile(delays.start_s, 0.99)),
            _ms(max(delays.start_s)),
            "",
            "-",
        ],
    ]
    print(format_table(("figure", "p50 ms", "p99 ms", "max ms", "target", "mark"), rows))
    print()
    share = ratio(via.rps, direct.rps)
    print(f"Gateway throughput ({LOAD.describe()}, GET / of busybox httpd)")
    rows = [
        [
            "through Caddy",
            f"{via.rps:,.0f}",
            f"{via.p50_ms:.2f}",
            f"{via.p99_ms:.2f}",
            str(via.errors),
            f"{share:.2f}" if share is not None else "n/a",
            THROUGHPUT_TARGET.describe(),
            mark(share, THROUGHPUT_TARGET, via.errors),
        ],
        [
            "direct (published port)",
            f"{direct.rps:,.0f}",
            f"{direct.p50_ms:.2f}",
            f"{direct.p99_ms:.2f}",
            str(direct.errors),
            "1.00",
            "",
            mark(None, None, direct.errors),
        ],
    ]
    print(format_table(("figure", "req/s", "p50 ms", "p99 ms", "errors", "x direct", "target", "mark"), rows))
    print()
    print("Controller CPU over a quiet window (cores: CPU seconds per wall second)")
    base = cpus[0].controller_cores + cpus[0].podman_cores
    rows = [
        [
            f"{c.workloads} workloads running",
            f"{c.window_s:.0f} s",
            f"{c.controller_cores:.4f}",
            f"{c.podman_cores:.4f}",
            f"{c.controller_cores + c.podman_cores:.4f}",
            f"{ratio(c.controller_cores + c.podman_cores, base) or 0:.2f}",
        ]
        for c in cpus
    ]
    print(format_table(("figure", "window", "controller", "podman cmds", "total", "x first"), rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runtime", description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=20, help="PATCHes for the delay figure (default 20)")
    parser.add_argument("--idle", type=int, default=50, help="workloads running for the CPU figure (default 50)")
    parser.add_argument("--window", type=float, default=20.0, help="seconds of each quiet CPU window (default 20)")
    args = parser.parse_args(argv)
    missing = missing_tools()
    if missing:
        print(f"bench.runtime skipped: {missing}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as scratch:
        work = Path(scratch)
        try:
            with stage(work) as st:
                delays = write_delays(st, max(1, min(args.writes, 100)))
                direct, via = throughput(st, work)
                cpus = [idle_cpu(st, args.window)]
                took = start_idle(st, max(2, min(args.idle, 100)))
                print(f"({args.idle} workloads running {took:.0f} s after their creation began)")
                cpus.append(idle_cpu(st, args.window))
        except pytest.skip.Exception as skipped:  # the tests' engine set-up says why it cannot run
            print(f"bench.runtime skipped: {skipped.msg}")
            return 0
        report(delays, direct, via, cpus)
        print()
        runtime_apply.main(work / "apply")
    return 0


if __name__ == "__main__":
    sys.exit(main())
