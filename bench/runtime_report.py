"""``bench.runtime``'s figures and how they are printed: tables as the other benches print them,
each figure against its reference measured in the same run, ``*`` on a mark measured while other
processes were busy (``bench.verdict.noted``)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.loadgen import Load, WrkResult
from bench.report import format_table
from bench.verdict import Target, mark, noted, ratio

DELAY_TARGET = Target("<=", 1.0)
THROUGHPUT_TARGET = Target(">=", 0.5)
#: The same for the gateway and the direct run: wrk on loopback, a few connections, bounded.
LOAD = Load(threads=2, connections=8, duration_s=5)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class Delays:
    create_s: list[float]
    start_s: list[float]
    #: Each write's (sent, create event) wall-clock times, and where they went between.
    spans: list[tuple[float, float]]
    breakdown: list[list[str]]
    #: Cores other processes used during the writes (``bench.verdict.noted``).
    other_cores: float


@dataclass(frozen=True)
class Cpu:
    workloads: int
    window_s: float
    controller_cores: float
    podman_cores: float
    other_cores: float


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


def print_figures(delays: Delays, direct: WrkResult, via: WrkResult, cpus: list[Cpu]) -> None:
    p99 = quantile(delays.create_s, 0.99)
    print(f"Write → engine delay ({len(delays.create_s)} PATCHes of env, one replica, podman events)")
    rows = [
        [
            "PATCH → create",
            _ms(quantile(delays.create_s, 0.5)),
            _ms(p99),
            _ms(max(delays.create_s)),
            DELAY_TARGET.describe() + " s (p99)",
            noted(mark(p99, DELAY_TARGET), delays.other_cores),
        ],
        [
            "PATCH → start",
            _ms(quantile(delays.start_s, 0.5)),
            _ms(quantile(delays.start_s, 0.99)),
            _ms(max(delays.start_s)),
            "",
            noted("-", delays.other_cores),
        ],
    ]
    print(format_table(("figure", "p50 ms", "p99 ms", "max ms", "target", "mark"), rows))
    print(f"(other processes used {delays.other_cores:.2f} cores during the writes)")
    print("Where PATCH → create goes (the controller's trace; bench.runtime_trace)")
    print(format_table(("segment", "p50", "max"), delays.breakdown))
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
            f"{via.other_cores:.2f}",
            f"{share:.2f}" if share is not None else "n/a",
            THROUGHPUT_TARGET.describe(),
            noted(mark(share, THROUGHPUT_TARGET, via.errors), via.other_cores),
        ],
        [
            "direct (published port)",
            f"{direct.rps:,.0f}",
            f"{direct.p50_ms:.2f}",
            f"{direct.p99_ms:.2f}",
            str(direct.errors),
            f"{direct.other_cores:.2f}",
            "1.00",
            "",
            noted(mark(None, None, direct.errors), direct.other_cores),
        ],
    ]
    header = ("figure", "req/s", "p50 ms", "p99 ms", "errors", "others idle", "x direct", "target", "mark")
    print(format_table(header, rows))
    print()
    print("Controller CPU over a quiet window (cores: CPU seconds per wall second)")
    base = cpus[0].controller_cores + cpus[0].podman_cores
    rows = [
        [
            f"{c.workloads} workload{'s' if c.workloads != 1 else ''} running",
            f"{c.window_s:.0f} s",
            f"{c.controller_cores:.4f}",
            f"{c.podman_cores:.4f}",
            f"{c.controller_cores + c.podman_cores:.4f}",
            f"{c.other_cores:.2f}",
            f"{ratio(c.controller_cores + c.podman_cores, base) or 0:.2f}",
            noted("-", c.other_cores),
        ]
        for c in cpus
    ]
    columns = ("figure", "window", "controller", "podman cmds", "total", "other CPU", "x first", "mark")
    print(format_table(columns, rows))
