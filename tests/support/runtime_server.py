"""A real ``plinth serve --runtime containers`` for tests: the server, its controller and
Caddy, under a container scope of its own.

:func:`start_runtime_server` starts one with ``--container-label`` set to the session's
test-run label (so the session finalizer removes whatever it made) plus a
``plinth.test-scope`` label unique to the caller, and a gateway port of its own, so servers
started by parallel tests (or by two xdist workers) never see or collect each other's
containers. :class:`RuntimeServer` has the wait helpers (containers of a workload, a 200
through the gateway, a line in the log) and :meth:`RuntimeServer.remove_containers`, the
finalizer's clean-up of that scope. Every wait is bounded and fails saying what it awaited.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from plinth.runtime.gateway.caddy import free_loopback_port
from tests.support import pg
from tests.support.containers import TEST_RUN, ContainerKit
from tests.support.server import ServerProcess, start_server

SCOPE = "plinth.test-scope"
WAIT_S = 60
T = TypeVar("T")


def processes(*marks: bytes) -> list[int]:
    """The pids of live processes whose command line holds every one of ``marks``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if proc.name.isdigit() and all(mark in cmdline for mark in marks):
            found.append(int(proc.name))
    return found


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = WAIT_S, every: float = 0.2) -> T:
    """``probe()``'s first truthy answer, polled until ``timeout``; fails naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        answer = probe()
        if answer:
            return answer
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(every)


@dataclass
class RuntimeServer:
    """One ``plinth serve --runtime containers`` and the scope of its containers."""

    kit: ContainerKit
    data_dir: Path
    database_url: str | None
    org: str
    scope: str
    gateway_port: int
    #: Where the controller's data plane listens (each deployment's ``status.remote``).
    dataplane_port: int = 0
    server: ServerProcess | None = None
    extra_args: tuple[str, ...] = ()
    port: int | None = None
    workers: int = 1
    #: Earlier servers' logs, so log checks see every start (``log_text``).
    logs: list[str] = field(default_factory=list)

    @property
    def labels(self) -> dict[str, str]:
        """The ``--container-label`` scope: the session's test run and this server's own scope."""
        return {TEST_RUN: self.kit.run_id, SCOPE: self.scope}

    @property
    def api(self) -> ServerProcess:
        assert self.server is not None, "the server is not running"
        return self.server

    def args(self, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
        args = ["--runtime", "containers", "--container-engine", self.kit.engine]
        args += ["--gateway-listen", f"127.0.0.1:{self.gateway_port}"]
        args += ["--dataplane-listen", f"127.0.0.1:{self.dataplane_port or free_loopback_port()}"]
        for key, value in self.labels.items():
            args += ["--container-label", f"{key}={value}"]
        return (*args, *self.extra_args, *extra)

    def start(self, *extra: str) -> RuntimeServer:
        """Start (or start again, on the same port, store and scope) with ``extra`` arguments."""
        assert self.server is None or self.server.process.poll() is not None, "already running"
        self.server = start_server(
            self.data_dir,
            self.database_url,
            org=self.org,
            port=self.port,
            workers=self.workers,
            extra_args=self.args(extra),
        )
        self.port = int(self.server.url.rsplit(":", 1)[1])
        return self

    def stop(self) -> None:
        """SIGTERM, as an operator stops it (containers stay unless --remove-containers-on-exit)."""
        if self.server is not None:
            self.server.stop()
            self.logs.append(self.server.log_path.read_text(errors="replace"))

    def log_text(self) -> str:
        current = self.server.log_path.read_text(errors="replace") if self.server else ""
        return "".join(self.logs) + current

    def containers(self, **labels: str) -> list[dict[str, Any]]:
        """This scope's containers, narrowed by ``labels``, in the shape of ``podman ps --all
        --format json`` (``Id``, ``Names``, ``State``, ``ExitCode``, ``Labels``) whatever the engine."""
        filters = [a for k, v in {**self.labels, **labels}.items() for a in ("--filter", f"label={k}={v}")]
        if self.kit.engine == "podman":
            done = self.kit.cli("ps", "--all", "--format", "json", *filters)
            return list(json.loads(done.stdout or "[]"))
        ids = self.kit.cli("ps", "--all", "--quiet", "--no-trunc", *filters).stdout.split()
        # docker's ps prints labels and ports as text: its inspect has them as JSON.
        docs = json.loads(self.kit.cli("container", "inspect", *ids, check=False).stdout or "[]") if ids else []
        return [
            {
                "Id": doc["Id"],
                "Names": [doc["Name"].lstrip("/")],
                "State": doc["State"]["Status"],
                "ExitCode": doc["State"]["ExitCode"],
                "Labels": doc["Config"]["Labels"] or {},
            }
            for doc in docs
        ]

    def running(self, workload: str) -> dict[str, str]:
        """A workload's running containers: engine name -> ID."""
        found = self.containers(**{"plinth.workload": workload})
        return {c["Names"][0]: c["Id"] for c in found if c.get("State") == "running"}

    def wait_running(self, workload: str, count: int = 1) -> dict[str, str]:
        return wait_for(
            lambda: found if len(found := self.running(workload)) == count else None,
            f"{count} running container(s) of workload {workload}",
        )

    def gateway_get(self, host: str, path: str = "/") -> httpx.Response | None:
        try:
            return httpx.get(f"http://127.0.0.1:{self.gateway_port}{path}", headers={"Host": host}, timeout=10)
        except httpx.TransportError:
            return None  # the gateway is not listening yet

    def wait_gateway(self, host: str, status: int = 200, path: str = "/") -> httpx.Response:
        return wait_for(
            lambda: r if (r := self.gateway_get(host, path)) is not None and r.status_code == status else None,
            f"{status} from the gateway for Host {host}{path}",
        )

    def wait_log(self, text: str, count: int = 1) -> None:
        wait_for(lambda: self.log_text().count(text) >= count, f"{count}x {text!r} in the server's log")

    def controllers(self) -> list[int]:
        """The live controller processes talking to this server (``--api`` its URL)."""
        return processes(b"plinth.runtime.controller", f"--api\0{self.api.url}\0".encode())

    def delete_gvc(self, name: str) -> None:
        """Delete the GVC ``name`` and every workload in it, through the API (the controller
        then removes their containers; the module's finalizer removes any left)."""
        base = f"/org/{self.org}/gvc/{name}"
        with self.api.client() as api:
            for item in api.get(f"{base}/workload").json().get("items", []):
                api.delete(f"{base}/workload/{item['name']}")
            api.delete(base)

    def remove_containers(self) -> None:
        """Remove every container of this scope (the finalizer; also when a test failed)."""
        self.kit.remove(*(c["Id"] for c in self.containers()))


def start_runtime_server(
    data_dir: Path,
    kit: ContainerKit,
    database_url: str | None = None,
    *,
    extra_args: tuple[str, ...] = (),
    workers: int = 1,
) -> RuntimeServer:
    """A started :class:`RuntimeServer` with an org, a scope and a gateway port of its own."""
    unique = uuid.uuid4().hex[:10]
    org = f"rt{kit.run_id[:6]}{unique}"
    runtime = RuntimeServer(
        kit,
        data_dir,
        database_url,
        org,
        unique,
        free_loopback_port(),
        free_loopback_port(),
        extra_args=extra_args,
        workers=workers,
    )
    return runtime.start()


@contextlib.contextmanager
def serving_runtime(
    store: str, data_dir: Path, kit: ContainerKit, *, workers: int = 1, extra_args: tuple[str, ...] = ()
) -> Iterator[RuntimeServer]:
    """A module's :class:`RuntimeServer` on ``store`` (``sqlite``, or a throwaway PostgreSQL
    database) with ``extra_args`` for ``plinth serve``, stopped after with its containers
    removed and its database dropped."""
    database = pg.create_database() if store == "postgres" else None
    server: RuntimeServer | None = None
    try:
        server = start_runtime_server(data_dir, kit, database, workers=workers, extra_args=extra_args)
        yield server
    finally:
        if server is not None:
            server.stop()
            server.remove_containers()
        if database:
            pg.drop_database(database)
