"""The gateway's test set-up: one Caddy (Debian's) and two real containers, ``alpha`` and
``beta`` (the test image's ``/cgi-bin/echo`` telling which one answered and what the request
looked like on arrival), shared by the module that asks for them; all on 127.0.0.1."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from plinth.runtime.containers import CliEngine, ReplicaSpec, identity_labels
from plinth.runtime.gateway import Caddy, Route, RouteTable
from plinth.runtime.gateway.caddy import free_loopback_port
from tests.support.containers import ContainerKit, podman

READY_WAIT_S = 30
ECHO = "/cgi-bin/echo"


@dataclass
class Gateway:
    caddy: Caddy
    listen: str
    alpha: int
    beta: int

    def apply(self, *routes: Route) -> None:
        self.apply_table(RouteTable(routes))

    def apply_table(self, table: RouteTable) -> None:
        asyncio.run(self.caddy.apply(table, self.listen))

    def get(self, path: str, host: str, client: httpx.Client | None = None) -> httpx.Response:
        url = f"http://{self.listen}{path}"
        if client is not None:
            return client.get(url, headers={"Host": host})
        return httpx.get(url, headers={"Host": host}, timeout=10)  # a hang fails the test


def _wait_up(port: int) -> None:
    deadline = time.monotonic() + READY_WAIT_S
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}{ECHO}", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"nothing answered on 127.0.0.1:{port}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def gateway(test_containers: ContainerKit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    binary = shutil.which("podman")
    assert binary is not None
    engine = CliEngine("podman", binary)
    names = [f"t-{test_containers.run_id}-gw-{which}" for which in ("alpha", "beta")]
    labels = {**identity_labels("org1", "main", "gw", "aws-us-west-2"), **test_containers.labels}
    try:
        ports = []
        for name, which in zip(names, ("alpha", "beta"), strict=True):
            spec = ReplicaSpec(name=name, image=test_containers.image, labels=labels, ports=[8080], hostname=which)
            ports.append(asyncio.run(engine.run(spec)).ports[8080])
        for port in ports:
            _wait_up(port)
        with Caddy(Path(tmp_path_factory.mktemp("caddy"))) as caddy:
            yield Gateway(caddy, f"127.0.0.1:{free_loopback_port()}", *ports)
    finally:
        for name in names:
            podman("rm", "--force", "--time", "0", name, check=False)


def replica_of(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    fields = dict(part.split("=", 1) for part in response.text.split())
    return fields["replica"]
