"""The data plane's figures, each against the engine doing the same directly, in the same run:
``python -m bench.dataplane [--rounds N] [--mib M]``.

The parts are the real ones: ``plinth serve --runtime containers`` (SQLite) with its controller,
data plane and Caddy, podman with the tests' ``CONTAINERS_CONF`` and image, and the official CLI
pinned by tests/compat (docs/runtime.md, "The data plane"). Everything is on 127.0.0.1; every
container carries the run's ``plinth.test-run`` label and is removed at the end, also on failure.
Every figure is the median of ``--rounds`` (default 5), the two sides alternating.

1. **exec.** ``cpln workload exec web -- true`` against ``podman exec CONTAINER true``: the wall
   times and their ratio (what a user waits, Node's start-up and the CLI's API calls included);
   then **Plinth's share**: the same session opened by a bare websocket client
   (``bench.dataplane_client``: connect, request, the close) less ``podman exec`` alone, which
   the session runs, round by round (target: under 100 ms); these two over three times
   ``--rounds``, the share being a small difference of two noisy times.
2. **cp.** A file of ``--mib`` MiB (default 100) and a tiny one (1 KiB) up with ``cpln cp`` and
   with ``podman cp``, and back down. Two ratios podman / cpln each way (target ≥ 0.5): the
   **wall-time** ratio, and the **marginal throughput** ratio, each tool's throughput being
   ``size / (t(large) - t(tiny))``, so fixed costs (Node's start-up, the CLI's API calls and its
   ``test -d`` session before an upload, podman's own start-up) are not counted as transfer.
   Then ``exec cat`` of the large file.
3. **The data plane alone** (``bench.dataplane_client``): the same tar up and ``cat`` down
   against ``podman exec -i`` / ``podman exec`` doing the same.

Skipped, saying why, without podman, runc, busybox-static, caddy or node.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from bench import dataplane_client
from bench.runtime_stage import engine_config, missing_tools
from tests.compat.conftest import Cpln, ensure_cpln
from tests.support import containers
from tests.support.runtime_server import RuntimeServer, start_runtime_server

LOCATION = "aws-us-east-2"
GVC = "bench"
WORKLOAD = "web"
SHARE_ROUNDS = 3


def timed(run: Callable[[], subprocess.CompletedProcess[bytes]]) -> float:
    started = time.perf_counter()
    done = run()
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{done.args[:4]}... exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def setup(server: RuntimeServer, image: str) -> str:
    """The GVC and ``web`` (one replica); its engine container's name once it runs."""
    base = f"/org/{server.org}/gvc"
    with server.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        api.post(base, json={"name": GVC, "spec": placement}).raise_for_status()
        container = {"name": "main", "image": image, "cpu": "1000m", "memory": "256Mi"}
        spec = {"type": "standard", "containers": [container]}
        api.post(f"{base}/{GVC}/workload", json={"name": WORKLOAD, "spec": spec}).raise_for_status()
    return next(iter(server.wait_running(WORKLOAD, 1)))


def median_time(run: Callable[[], subprocess.CompletedProcess[bytes]], rounds: int) -> float:
    return statistics.median(timed(run) for _ in range(rounds))


def figures(server: RuntimeServer, cpln_bin: Path, home: Path, engine_name: str, rounds: int, mib: int) -> None:
    cli = Cpln(cpln_bin, home, server.api.url, server.api.key)
    auth = ["--gvc", GVC, "--org", server.org, "--endpoint", server.api.url, "--token", server.api.key]
    where = ["--location", LOCATION, "--replica", f"{WORKLOAD}-0", "--container", "main", *auth]

    def cpln(*args: str) -> Callable[[], subprocess.CompletedProcess[bytes]]:
        argv = [str(cpln_bin), *args]
        return lambda: subprocess.run(argv, capture_output=True, env=cli.environ(), timeout=600, check=False)

    def podman(*args: str) -> Callable[[], subprocess.CompletedProcess[bytes]]:
        return lambda: subprocess.run(["podman", *args], capture_output=True, timeout=600, check=False)

    exec_figures(server, engine_name, rounds, cpln("workload", "exec", WORKLOAD, *where, "--", "true"), podman)
    with tempfile.TemporaryDirectory() as scratch:
        times: dict[tuple[str, str, str], list[float]] = {}
        for size, name in ((1024, "tiny"), (mib * 1024 * 1024, "large")):
            source = Path(scratch) / f"{name}.bin"
            source.write_bytes(os.urandom(size))
            for _ in range(rounds):
                steps = (
                    ("cpln", "up", cpln("cp", str(source), f"{WORKLOAD}:/tmp/ours-{name}.bin", *where)),
                    ("podman", "up", podman("cp", str(source), f"{engine_name}:/tmp/direct-{name}.bin")),
                    ("cpln", "down", cpln("cp", f"{WORKLOAD}:tmp/ours-{name}.bin", f"{scratch}/o-{name}", *where)),
                    ("podman", "down", podman("cp", f"{engine_name}:/tmp/direct-{name}.bin", f"{scratch}/d-{name}")),
                )
                for tool, way, run in steps:
                    times.setdefault((tool, way, name), []).append(timed(run))
            assert (Path(scratch) / f"o-{name}").read_bytes() == source.read_bytes(), "cpln cp down changed the file"
        cat_ours = median_time(cpln("workload", "exec", WORKLOAD, *where, "--", "cat", "/tmp/ours-large.bin"), rounds)
        cat_direct = median_time(podman("exec", engine_name, "cat", "/tmp/direct-large.bin"), rounds)
    t = {key: statistics.median(values) for key, values in times.items()}
    size_mb = mib * 1024 * 1024 / 1e6
    for way in ("up", "down"):
        wall = t[("podman", way, "large")] / t[("cpln", way, "large")]
        marginal = {tool: t[(tool, way, "large")] - t[(tool, way, "tiny")] for tool in ("cpln", "podman")}
        through = marginal["podman"] / marginal["cpln"]
        print(
            f"cp {mib} MiB {way}: cpln {t[('cpln', way, 'large')]:.2f} s (1 KiB: {t[('cpln', way, 'tiny')]:.2f} s), "
            f"podman cp {t[('podman', way, 'large')]:.2f} s (1 KiB: {t[('podman', way, 'tiny')]:.2f} s)"
        )
        print(
            f"  wall-time ratio podman/cpln {wall:.2f} ({mark(wall)}); marginal throughput "
            f"(size / (t(large) - t(tiny))): cpln {size_mb / marginal['cpln']:.0f} MB/s, "
            f"podman {size_mb / marginal['podman']:.0f} MB/s, ratio cpln/podman {through:.2f} ({mark(through)})"
        )
    print(f"exec cat of {mib} MiB: cpln {cat_ours:.2f} s, podman exec {cat_direct:.2f} s")
    bare(server, engine_name, mib)


def mark(ratio: float) -> str:
    return "target >= 0.5 met" if ratio >= 0.5 else "below the 0.5 target"


def exec_figures(
    server: RuntimeServer,
    engine_name: str,
    rounds: int,
    cpln_true: Callable[[], subprocess.CompletedProcess[bytes]],
    podman: Callable[..., Callable[[], subprocess.CompletedProcess[bytes]]],
) -> None:
    """``exec true`` through the CLI, through a bare client (Plinth's share), and directly."""
    base = {"token": server.api.key, "org": server.org, "gvc": GVC, "pod": f"{WORKLOAD}-0", "container": "main"}
    ours, bare_client, direct = [], [], []
    for round_ in range(SHARE_ROUNDS * rounds):  # the share is a small difference: more rounds
        if round_ < rounds:
            ours.append(timed(cpln_true))
        started = time.perf_counter()
        asyncio.run(dataplane_client.session(server.dataplane_port, LOCATION, {**base, "command": ["true"]}))
        bare_client.append(time.perf_counter() - started)
        direct.append(timed(podman("exec", engine_name, "true")))
    a, b, c = (statistics.median(x) * 1000 for x in (ours, bare_client, direct))
    print(f"exec true: cpln {a:.0f} ms, podman exec {c:.0f} ms (medians); ratio {a / c:.1f}")
    # Each round's difference (the two ran back to back), so the machine's drift cancels out.
    differences = sorted((x - y) * 1000 for x, y in zip(bare_client, direct, strict=True))
    share = statistics.median(differences)
    quartiles = statistics.quantiles(differences, n=4)
    verdict = "met" if share < 100 else "missed"
    print(
        f"exec true, Plinth's share: a bare websocket client's session (connect to close, median {b:.0f} ms) "
        f"less the podman exec run just after it: median {share:.0f} ms of {len(differences)} rounds "
        f"(quartiles {quartiles[0]:.0f} to {quartiles[2]:.0f} ms; target < 100 ms: {verdict})"
    )


def bare(server: RuntimeServer, engine_name: str, mib: int) -> None:
    """The data plane alone (``bench.dataplane_client``): the same sessions without the CLI."""
    port = server.dataplane_port
    base = {"token": server.api.key, "org": server.org, "gvc": GVC, "pod": f"{WORKLOAD}-0", "container": "main"}
    upload = dataplane_client.tar_of(mib * 1024 * 1024)
    untar = {**base, "stdin": True, "command": ["tar", "-xmf", "-", "-C", "/tmp"], "writeReceivedBytes": True}
    up, _ = asyncio.run(dataplane_client.session(port, LOCATION, untar, upload))
    with tempfile.NamedTemporaryFile(suffix=".tar") as file:
        file.write(upload)
        file.flush()
        with open(file.name, "rb") as source:
            started = time.perf_counter()
            done = subprocess.run(["podman", "exec", "-i", engine_name, "tar", "-xmf", "-", "-C", "/tmp"], stdin=source)
            direct_up = time.perf_counter() - started
    assert done.returncode == 0
    down, got = asyncio.run(dataplane_client.session(port, LOCATION, {**base, "command": ["cat", "/tmp/upload.bin"]}))
    started = time.perf_counter()
    subprocess.run(["podman", "exec", engine_name, "cat", "/tmp/upload.bin"], capture_output=True, check=True)
    direct_down = time.perf_counter() - started
    assert got == mib * 1024 * 1024, got
    print(
        f"data plane alone, {mib} MiB: tar up {up:.2f} s (podman exec -i {direct_up:.2f} s, ratio {direct_up / up:.2f})"
    )
    print(
        f"data plane alone, {mib} MiB: cat down {down:.2f} s, to the close "
        f"(podman exec {direct_down:.2f} s, ratio {direct_down / down:.2f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dataplane", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mib", type=int, default=100)
    args = parser.parse_args(argv)
    missing = missing_tools()
    if missing:
        print(f"bench.dataplane skipped: {missing}")
        return 0
    try:
        cpln_bin = ensure_cpln()
    except pytest.skip.Exception as skipped:
        print(f"bench.dataplane skipped: {skipped.msg}")
        return 0
    with tempfile.TemporaryDirectory(prefix="plinth-bench-dataplane-") as tmp:
        work = Path(tmp)
        try:
            with engine_config(work) as (image, run_id):
                labels = {"plinth.managed": "true", containers.TEST_RUN: run_id}
                kit = containers.ContainerKit("podman", Path(os.environ["CONTAINERS_CONF"]), image, run_id, labels)
                server = start_runtime_server(work / "server", kit)
                try:
                    engine_name = setup(server, image)
                    home = work / "cpln-home"
                    home.mkdir()
                    figures(server, cpln_bin, home, engine_name, args.rounds, args.mib)
                finally:
                    server.stop()
                    server.remove_containers()
        except pytest.skip.Exception as skipped:
            print(f"bench.dataplane skipped: {skipped.msg}")
        except (httpx.HTTPError, RuntimeError, TimeoutError, AssertionError) as exc:
            print(f"bench.dataplane failed: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
