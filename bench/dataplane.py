"""The data plane's figures, each against the engine doing the same directly, in the same run:
``python -m bench.dataplane [--rounds N] [--mib M]``.

The parts are the real ones: ``plinth serve --runtime containers`` (SQLite) with its controller,
data plane and Caddy, podman with the tests' ``CONTAINERS_CONF`` and image, and the official CLI
pinned by tests/compat (docs/runtime.md, "The data plane"). Everything is on 127.0.0.1; every
container carries the run's ``plinth.test-run`` label and is removed at the end, also on failure.

1. **exec.** ``cpln workload exec web -- true`` against ``podman exec CONTAINER true``,
   alternating, ``--rounds`` each (default 5): the median wall time of each and their ratio.
   The CLI's time includes Node's start-up and its API calls (the deployment, the workload),
   which are not the data plane's: the figure is what a user waits.
2. **cp.** A file of ``--mib`` MiB (default 100) up with ``cpln cp`` and with ``podman cp``, and
   back down: throughput ratio podman / cpln (target ≥ 0.5 each way); and ``exec cat`` of it.
3. **The data plane alone** (``bench.dataplane_client``, a bare websocket client): the same tar
   up and ``cat`` down against ``podman exec -i`` / ``podman exec`` doing the same.

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


def figures(server: RuntimeServer, cpln_bin: Path, home: Path, engine_name: str, rounds: int, mib: int) -> None:
    cli = Cpln(cpln_bin, home, server.api.url, server.api.key)
    auth = ["--gvc", GVC, "--org", server.org, "--endpoint", server.api.url, "--token", server.api.key]
    where = ["--location", LOCATION, "--replica", f"{WORKLOAD}-0", "--container", "main", *auth]

    def cpln(*args: str) -> Callable[[], subprocess.CompletedProcess[bytes]]:
        argv = [str(cpln_bin), *args]
        return lambda: subprocess.run(argv, capture_output=True, env=cli.environ(), timeout=600, check=False)

    def podman(*args: str) -> Callable[[], subprocess.CompletedProcess[bytes]]:
        return lambda: subprocess.run(["podman", *args], capture_output=True, timeout=600, check=False)

    ours, direct = [], []
    for _ in range(rounds):
        ours.append(timed(cpln("workload", "exec", WORKLOAD, *where, "--", "true")))
        direct.append(timed(podman("exec", engine_name, "true")))
    a, b = statistics.median(ours), statistics.median(direct)
    print(f"exec true: cpln {a * 1000:.0f} ms, podman exec {b * 1000:.0f} ms (median of {rounds}); ratio {a / b:.1f}")

    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "payload.bin"
        source.write_bytes(os.urandom(mib * 1024 * 1024))
        up_ours = timed(cpln("cp", str(source), f"{WORKLOAD}:/tmp/ours.bin", *where))
        up_direct = timed(podman("cp", str(source), f"{engine_name}:/tmp/direct.bin"))
        down_ours = timed(cpln("cp", f"{WORKLOAD}:tmp/ours.bin", str(Path(scratch) / "ours.bin"), *where))
        down_direct = timed(podman("cp", f"{engine_name}:/tmp/direct.bin", str(Path(scratch) / "direct.bin")))
        cat_ours = timed(cpln("workload", "exec", WORKLOAD, *where, "--", "cat", "/tmp/ours.bin"))
        cat_direct = timed(podman("exec", engine_name, "cat", "/tmp/direct.bin"))
    print(f"exec cat of {mib} MiB: cpln {cat_ours:.2f} s, podman exec {cat_direct:.2f} s")
    bare(server, engine_name, mib)
    for way, mine, theirs in (("up", up_ours, up_direct), ("down", down_ours, down_direct)):
        ratio = theirs / mine
        mark = "ok" if ratio >= 0.5 else "BELOW TARGET"
        print(
            f"cp {mib} MiB {way}: cpln {mine:.2f} s ({mib / mine:.0f} MiB/s), podman cp {theirs:.2f} s; "
            f"ratio podman/cpln {ratio:.2f} (target >= 0.5: {mark})"
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
        f"data plane alone, {mib} MiB: cat down {down:.2f} s with the closing wait "
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
