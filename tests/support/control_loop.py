"""A control loop against a real server, for tests: the loop on its own event loop in a
thread (as it would run beside ``plinth serve``), bounded waits, and the workload documents
and container look-ups the loop tests share (tests/runtime/controller/test_loop*.py)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plinth.runtime.containers import CliEngine, ContainerInfo
from plinth.runtime.containers.protocol import ORG, WORKLOAD
from plinth.runtime.controller import ControlLoop, Informer
from plinth.runtime.controller.commands import CommandRunner
from plinth.runtime.controller.reporter import Reporter
from plinth.runtime.controller.supervisor import Supervisor
from plinth.runtime.gateway import Caddy
from plinth.runtime.gateway.caddy import free_loopback_port
from tests.aio import RunAsync
from tests.support import pg
from tests.support.containers import TEST_RUN, ContainerKit
from tests.support.server import ServerProcess, start_server

RELIST_S = 3.0  # short, so the safety net is seen within a test
WAIT_S = 60


def engine(key: bytes) -> CliEngine:
    """Podman under the spec-hash ``key`` (loops sharing a key adopt each other's containers)."""
    binary = shutil.which("podman")
    assert binary is not None
    return CliEngine("podman", binary, hash_key=key)


class LoopThread:
    """A :class:`ControlLoop` on its own event loop in a thread; ``stop`` cancels it."""

    def __init__(
        self,
        server: ServerProcess,
        kit: ContainerKit,
        key: bytes,
        resource_version: str | None = None,
        gateway: Any = None,
    ) -> None:
        self.server, self.kit, self.key, self.gateway = server, kit, key, gateway
        self.resource_version = resource_version
        self.control: ControlLoop | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = threading.Event()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._started.wait(30)

    def _main(self) -> None:
        async def main() -> None:
            informer = Informer(self.server.url, self.server.key, self.server.org, relist_interval_s=RELIST_S)
            supervisor = Supervisor(base_s=0.5, cap_s=1)  # short back-off, so restarts are seen in a test
            # What the loop observes is what the API reports (a server run with --runtime containers).
            reporter = Reporter(self.server.url, self.server.key, self.server.org)
            self.control = ControlLoop(
                informer,
                engine(self.key),
                labels={TEST_RUN: self.kit.run_id},
                supervisor=supervisor,
                gateway=self.gateway,
                after_pass=reporter,
                after_probe=reporter.after_probe,
            )
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            self._started.set()
            # Commands are taken beside the loop, their runs named for the reporter.
            commands = CommandRunner(
                self.server.url,
                self.server.key,
                self.server.org,
                interval_s=0.5,
                execution_names=reporter.execution_names,
            )
            taking = asyncio.create_task(commands.run(self.control))
            try:
                await self.control.run()
            except asyncio.CancelledError:
                pass
            finally:
                taking.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await taking
                await reporter.close()

        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced by stop(): a loop must only end when cancelled
            self.failure = exc

    @property
    def passes(self) -> int:
        return self.control.passes if self.control else 0

    def errors(self) -> dict[str, str]:
        return dict(self.control.errors) if self.control else {}

    def stop(self) -> None:
        assert self._loop is not None and self._task is not None
        self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(30)
        assert not self._thread.is_alive()
        assert self.failure is None, self.failure


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The store of a module's server: ``None`` for SQLite, or a throwaway PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    url = pg.create_database()
    try:
        yield url
    finally:
        pg.drop_database(url)


def until(check: Callable[[], Any], what: str | Callable[[], str], timeout_s: float = WAIT_S) -> Any:
    """Poll ``check`` until it answers something true (answered), or fail naming ``what`` (a
    function is called for the message: it may say what was seen instead)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what if isinstance(what, str) else what()}")
        time.sleep(0.2)


def containers(run_async: RunAsync, server: ServerProcess, kit: ContainerKit, workload: str) -> list[ContainerInfo]:
    """The containers of ``workload`` in the server's org made under this test run."""
    labels = {TEST_RUN: kit.run_id, ORG: server.org, WORKLOAD: workload}
    return list(run_async(engine(b"").list(labels)))


def running_ids(run_async: RunAsync, server: ServerProcess, kit: ContainerKit, workload: str) -> set[str]:
    return {c.id for c in containers(run_async, server, kit, workload) if c.running}


def settled(
    run_async: RunAsync,
    server: ServerProcess,
    kit: ContainerKit,
    workload: str,
    count: int,
    seen: Callable[[], object] = lambda: "",
) -> set[str]:
    """Wait until exactly ``count`` containers of ``workload`` exist, all running (no surge
    leftovers); their IDs. ``seen`` adds to the failure's message (e.g. the loop's errors)."""

    def check() -> set[str] | bool:
        found = containers(run_async, server, kit, workload)
        if len(found) == count and all(c.running for c in found):
            return {c.id for c in found} or True
        return False

    value = until(check, lambda: f"{count} running containers of {workload} ({seen()})")
    return value if isinstance(value, set) else set()


def workload_doc(name: str, kit: ContainerKit, replicas: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A standard workload of the test image serving port 8080, with ``replicas`` replicas."""
    container: dict[str, Any] = {"name": "main", "image": kit.image, "ports": [{"number": 8080, "protocol": "http"}]}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {
        "name": name,
        "spec": {
            "type": "standard",
            "containers": [container],
            "defaultOptions": {"autoscaling": {"minScale": replicas, "maxScale": max(replicas, 1)}},
        },
    }


def exec_out(run_async: RunAsync, name: str, argv: list[str]) -> str:
    """What ``argv`` printed inside the container ``name``."""
    result = run_async(engine(b"").exec(name, argv))
    return bytes(result.stdout).decode().strip()


@contextlib.contextmanager
def loop_server(
    data_dir: Path, database: str | None, org: str, gvc: str, location: str, *args: str
) -> Iterator[ServerProcess]:
    """A server for a module's loop, with ``gvc`` placed in ``location`` in ``org`` (a name
    of the module's own, so two modules' loops never meet each other's containers)."""
    proc = start_server(data_dir, database, org=org, extra_args=args)
    try:
        with proc.client() as api:
            body = {"name": gvc, "spec": {"staticPlacement": {"locationLinks": [f"//location/{location}"]}}}
            assert api.post(f"/org/{proc.org}/gvc", json=body).status_code == 201
        yield proc
    finally:
        proc.stop()


@contextlib.contextmanager
def loop_gateway(state_dir: Path) -> Iterator[tuple[Caddy, str]]:
    """Caddy on 127.0.0.1, which a module's loops configure; and its listen address."""
    with Caddy(state_dir) as caddy:
        yield caddy, f"127.0.0.1:{free_loopback_port()}"
