"""The stage of ``bench.runtime``: podman configured as the tests configure it, a real ``plinth
serve``, the controller in its own process (``bench.runtime_controller``) with Caddy, and the
engine's event stream; everything removed at the end, also on failure.

The engine set-up is the tests' own (``tests/support/containers.py``: the ``CONTAINERS_CONF`` it
writes, the image it builds, its smoke run, its clean-up by the ``plinth.test-run`` label), imported
as ``bench.apply`` imports ``tests.support.server``. Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from bench import cpu
from bench.client import lift_quotas
from bench.procs import free_port
from bench.runtime_controller import DEBOUNCE_ENV, KEY_ENV, READY_LINE, TRACE_ENV
from bench.runtime_events import EventWatch
from plinth.runtime.containers import CliEngine, ContainerInfo
from plinth.runtime.containers.protocol import ORG, WORKLOAD
from tests.support import containers
from tests.support.server import ServerProcess, start_server

GVC = "main"
LOCATION = "aws-us-east-2"
WAIT_S = 120.0
T = TypeVar("T")


def missing_tools() -> str | None:
    """Why the bench cannot run here, or ``None``: podman, runc, a static busybox and caddy."""
    missing = [name for name in ("podman", "runc", "caddy") if shutil.which(name) is None]
    if not containers.BUSYBOX.exists():
        missing.append("busybox-static")
    if not missing:
        return None
    return f"{', '.join(missing)} missing (apt-get install {' '.join(containers.PACKAGES)})"


def until(check: Callable[[], T | None], what: str, timeout_s: float = WAIT_S, pause_s: float = 0.1) -> T:
    """Poll ``check`` until it answers something truthy; ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout_s:g} s: {what}")
        time.sleep(pause_s)


@dataclass(frozen=True)
class Load:
    machine: cpu.Snapshot
    #: CPU ticks of the controller (with its reaped children) and Caddy.
    stage: int


@dataclass
class Stage:
    server: ServerProcess
    api: httpx.Client
    image: str
    run_id: str
    controller: subprocess.Popen[bytes]
    listen: str  # the gateway's HOST:PORT
    alias: str  # the GVC's alias, for workload endpoint hosts
    events: EventWatch
    engine: CliEngine
    #: The controller's trace (``bench.runtime_controller``): its wake-ups and podman commands.
    trace: Path

    @property
    def org(self) -> str:
        return self.server.org

    def containers(self, workload: str | None = None) -> list[ContainerInfo]:
        labels = {containers.TEST_RUN: self.run_id, ORG: self.org}
        if workload:
            labels[WORKLOAD] = workload
        return list(asyncio.run(self.engine.list(labels)))

    def host(self, workload: str) -> str:
        """The ``Host`` of the workload's own endpoint through the gateway."""
        return f"{workload}-{self.alias}.localhost"

    def workload(self, name: str, env: dict[str, str] | None = None, cpu: str | None = None) -> dict[str, Any]:
        """A standard workload of one replica of the test image, open to 127.0.0.1 through the gateway."""
        port = {"number": 8080, "protocol": "http"}
        container: dict[str, Any] = {"name": "main", "image": self.image, "ports": [port]}
        if env:
            container["env"] = [{"name": k, "value": v} for k, v in env.items()]
        if cpu:
            container["cpu"] = cpu
        return {
            "name": name,
            "spec": {
                "type": "standard",
                "containers": [container],
                "defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 1}},
                "firewallConfig": {"external": {"inboundAllowCIDR": ["127.0.0.1/32"]}},
            },
        }

    def create(self, doc: dict[str, Any]) -> None:
        reply = self.api.post(f"/org/{self.org}/gvc/{GVC}/workload", json=doc)
        if reply.status_code != 201:
            raise RuntimeError(f"creating workload {doc['name']}: {reply.status_code} {reply.text[:300]}")

    def settled(self, workload: str) -> ContainerInfo:
        """Wait until the workload has exactly one container, running (no rollout leftovers)."""

        def one() -> ContainerInfo | None:
            found = self.containers(workload)
            return found[0] if len(found) == 1 and found[0].running else None

        return until(one, f"one running container of {workload}", pause_s=0.2)

    def _children(self) -> list[tuple[int, str]]:
        """The controller's live children, ``(pid, /proc/PID/stat)``."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if int(fields[1]) == self.controller.pid:
                found.append((int(entry.name), stat))
        return found

    def caddy_pid(self) -> int | None:
        """The controller's Caddy (its child), found in /proc."""
        return next((pid for pid, stat in self._children() if "(caddy)" in stat), None)

    def snapshot(self) -> Load:
        """What the machine and this stage's processes have used so far (for :meth:`other_cores`)."""
        own, children = self.cpu_ticks()
        caddy = self.caddy_pid()
        return Load(cpu.snapshot(self.server.process.pid), own + children + (cpu.process_ticks(caddy) if caddy else 0))

    def other_cores(self, before: Load, after: Load) -> float:
        """Cores used between the snapshots by anything but the stage (server, controller and the
        podman commands it reaped, Caddy, this bench and its reaped children): others' load, which
        makes a figure less trustworthy (``bench.verdict.noted``)."""
        elapsed = after.machine.at - before.machine.at
        if elapsed <= 0:
            return 0.0
        stage = (after.stage - before.stage) / cpu.TICKS / elapsed
        return max(0.0, cpu.other_cores(before.machine, after.machine) - stage)

    def cpu_ticks(self) -> tuple[int, int]:
        """The controller's own CPU ticks (utime + stime), and its podman commands': the reaped
        ones (cutime + cstime) and those still running, its ``podman events`` above all (all
        four fields: a command's own reaped children are its). Caddy is not a podman command."""
        stat = Path(f"/proc/{self.controller.pid}/stat").read_text()
        fields = stat[stat.rfind(")") + 2 :].split()
        podman = int(fields[13]) + int(fields[14])
        for _, child in self._children():
            if "(caddy)" not in child:
                values = child[child.rfind(")") + 2 :].split()
                podman += sum(int(v) for v in values[11:15])
        return int(fields[11]) + int(fields[12]), podman


@contextlib.contextmanager
def engine_config(work: Path) -> Iterator[tuple[str, str]]:
    """The tests' engine set-up: ``CONTAINERS_CONF`` set (for this process and its children) to
    the file they write, their image built, a run id whose smoke run passed; on the way out every
    container of the run id is removed and ``CONTAINERS_CONF`` restored. Yields (image, run id)."""
    previous = os.environ.get("CONTAINERS_CONF")
    os.environ["CONTAINERS_CONF"] = str(containers.write_containers_conf(work))
    run_id = containers.new_run_id()
    try:
        image = containers.ensure_image(work)
        containers.smoke(image, {"plinth.managed": "true", containers.TEST_RUN: run_id})
        yield image, run_id
    finally:
        containers.cleanup(run_id)
        if previous is None:
            os.environ.pop("CONTAINERS_CONF", None)
        else:
            os.environ["CONTAINERS_CONF"] = previous


def _start_controller(
    server: ServerProcess, run_id: str, work: Path, listen: str, debounce_s: float | None
) -> subprocess.Popen[bytes]:
    work.mkdir(parents=True, exist_ok=True)
    label = f"{containers.TEST_RUN}={run_id}"
    argv = [sys.executable, "-m", "bench.runtime_controller", server.url, server.org, label, str(work), listen]
    env = {**os.environ, KEY_ENV: server.key, TRACE_ENV: str(work / "trace.jsonl")}
    if debounce_s is not None:
        env[DEBOUNCE_ENV] = str(debounce_s)
    log = open(work / "controller.log", "wb")  # noqa: SIM115 (the child writes it for its whole life)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, env=env, start_new_session=True)
    log.close()
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    if line != READY_LINE:
        proc.wait(10)
        raise RuntimeError(f"the controller did not start:\n{(work / 'controller.log').read_text()[-2000:]}")
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def stage(work: Path, debounce_s: float | None = None) -> Iterator[Stage]:
    """The whole stage (``debounce_s``: the loop's, when not its default); on the way out the
    controller, events, server and every container go."""
    with engine_config(work) as (image, run_id):
        events = EventWatch(f"{containers.TEST_RUN}={run_id}")
        try:
            server = start_server(work / "data", org=f"b{run_id}")
            try:
                with server.client() as api:
                    lift_quotas(api, server.org)
                    gvc = {"name": GVC, "spec": {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}}
                    api.post(f"/org/{server.org}/gvc", json=gvc).raise_for_status()
                    alias = api.get(f"/org/{server.org}/gvc/{GVC}").json()["alias"]
                    listen = f"127.0.0.1:{free_port()}"
                    controller = _start_controller(server, run_id, work / "controller", listen, debounce_s)
                    try:
                        engine = CliEngine("podman", shutil.which("podman") or "podman")
                        trace = work / "controller" / "trace.jsonl"
                        yield Stage(server, api, image, run_id, controller, listen, alias, events, engine, trace)
                    finally:
                        _stop(controller)
            finally:
                server.stop()
        finally:
            events.close()
