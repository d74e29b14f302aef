"""``cpln port-forward`` (the official CLI, pinned, unchanged) against the data plane of ``plinth
serve --runtime containers``: HTTP through a forwarded port, tickets reused and audited once,
refused and revoked keys, an unpublished port, and the ticket protocol spoken directly (unknown
ticket, a ticket of another token, bad requests), on both stores (docs/runtime.md, "Port
forwarding"). The expired-ticket path runs the CLI against a second data plane, in this process
(same API, engine and scope), whose tickets follow a clock of the test's own.

One server per module and store, with a workload ``web`` of two replicas of the test image
(``busybox httpd`` on 8080) in a GVC of the module's own.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import subprocess
import threading
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TypeVar

import httpx
import orjson
import pytest

from plinth.runtime.containers import CliEngine
from plinth.runtime.dataplane import DataPlane
from plinth.runtime.dataplane.tickets import Tickets
from plinth.runtime.gateway.caddy import free_loopback_port
from tests.compat.test_dataplane import LOCATION, WORKLOAD, Plane, restricted_key
from tests.support.containers import INDEX, podman
from tests.support.runtime_server import RuntimeServer, wait_for
from tests.support.wsclient import WsClient

T = TypeVar("T")
MiB = 1024 * 1024
#: Declared by ``web`` and published, with nothing listening until a test starts ``nc`` on it.
UPLOAD_PORT = 9000


@pytest.fixture(scope="module")
def plane(runtime: RuntimeServer, cpln_bin: Path, cpln_home: Path) -> Iterator[Plane]:
    gvc = f"g{uuid.uuid4().hex[:8]}"
    base = f"/org/{runtime.org}/gvc"
    ports = [{"number": 8080, "protocol": "http"}, {"number": UPLOAD_PORT, "protocol": "tcp"}]
    container = {"name": "main", "image": runtime.kit.image, "ports": ports}
    spec = {"type": "standard", "containers": [container], "defaultOptions": {"autoscaling": {"minScale": 2}}}
    with runtime.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        assert api.post(base, json={"name": gvc, "spec": placement}).status_code == 201
        made = api.post(f"{base}/{gvc}/workload", json={"name": WORKLOAD, "spec": spec})
        assert made.status_code == 201, made.text
    runtime.wait_running(WORKLOAD, 2)
    yield Plane(runtime, gvc, cpln_bin, cpln_home)
    with runtime.api.client() as api:
        api.delete(f"{base}/{gvc}/workload/{WORKLOAD}")
        api.delete(f"{base}/{gvc}")


class Forward:
    """A running ``cpln port-forward``, listening on a free port of 127.0.0.1."""

    def __init__(
        self, plane: Plane, remote: int, *extra: str, token: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.port = free_loopback_port()
        args = ("port-forward", WORKLOAD, f"{self.port}:{remote}", "--location", LOCATION, "--address", "127.0.0.1")
        self.proc = subprocess.Popen(
            plane.argv(*args, *extra, token=token),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=plane.cli().environ(env),
        )
        assert self.proc.stdout is not None
        self.seen = ""
        while f"Forwarding from 127.0.0.1:{self.port}" not in self.seen:
            line = self.proc.stdout.readline().decode()
            assert line, f"port-forward ended: {self.seen}"
            self.seen += line

    def get(self, path: str = "/") -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.port}{path}", timeout=30)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def ended(self) -> tuple[int, str]:
        """Its exit code and everything it printed, once it exits on its own."""
        code = self.proc.wait(timeout=60)
        assert self.proc.stdout is not None
        return code, self.seen + self.proc.stdout.read().decode()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def forwards() -> Iterator[list[Forward]]:
    started: list[Forward] = []
    yield started
    for forward in started:
        forward.stop()


def remote(plane: Plane) -> str:
    return f"http://127.0.0.1:{plane.runtime.dataplane_port}/location/{LOCATION}"


def audited(plane: Plane, principal: str) -> list[dict[str, object]]:
    path = f"/org/{plane.org}/gvc/{plane.gvc}/workload/{WORKLOAD}/-eventlog?limit=1000"
    with plane.api() as api:
        events = api.get(path).json()["items"]
    return [e for e in events if e["status"] == "portForward" and e["context"]["principalLink"] == principal]


def test_http_reaches_the_container_through_a_forwarded_port(plane: Plane, forwards: list[Forward]) -> None:
    name, key, _ = restricted_key(plane, ["view", "connect"])
    forward = Forward(plane, 8080, token=key)
    forwards.append(forward)
    first = forward.get()
    assert first.status_code == 200 and first.content == INDEX
    second = forward.get("/cgi-bin/echo")  # a second connection reuses the ticket
    assert second.status_code == 200, second.text
    events = audited(plane, f"/org/{plane.org}/serviceaccount/{name}")
    assert len(events) == 1, events  # one ticket, one audit event
    context = events[0]["context"]
    assert isinstance(context, dict)
    assert context["command"] == ["port-forward", "8080"] and context["location"] == LOCATION


def test_a_named_replica_is_forwarded_to(plane: Plane, forwards: list[Forward]) -> None:
    forward = Forward(plane, 8080, "--replica", "web-1")
    forwards.append(forward)
    for _ in range(3):  # each connection goes to web-1, never to another replica
        shown = forward.get("/cgi-bin/echo")
        assert shown.status_code == 200, shown.text
        replica = shown.text.split("replica=", 1)[1].split()[0]
        assert replica.endswith("web-1"), shown.text


def listening(container: str, port: int) -> bool:
    """Whether a socket listens on ``port`` inside the container (its /proc/net/tcp)."""
    table = podman("exec", container, "cat", "/proc/net/tcp", "/proc/net/tcp6").stdout
    return any(f":{port:04X} " in line and line.split()[3] == "0A" for line in table.splitlines()[1:] if line.strip())


def test_8_mib_go_each_way_byte_for_byte(plane: Plane, forwards: list[Forward]) -> None:
    container = plane.container("web-0")
    podman("exec", container, "dd", "if=/dev/urandom", "of=/www/big.bin", "bs=1048576", "count=8")
    expected = podman("exec", container, "sha256sum", "/www/big.bin").stdout.split()[0]
    down = Forward(plane, 8080, "--replica", "web-0")
    forwards.append(down)
    got = down.get("/big.bin")
    assert len(got.content) == 8 * MiB and hashlib.sha256(got.content).hexdigest() == expected

    # nc's stdin stays open (and empty): at its end nc would close its sending half, and the
    # container closing its side ends a forwarded connection (docs/runtime.md).
    podman("exec", "-d", container, "sh", "-c", f"sleep 600 | nc -l -p {UPLOAD_PORT} > /tmp/up.bin")
    wait_for(lambda: listening(container, UPLOAD_PORT), "nc listening in the replica")
    up = Forward(plane, UPLOAD_PORT, "--replica", "web-0")
    forwards.append(up)
    data = os.urandom(8 * MiB)
    with up.connect() as sent:
        sent.sendall(data)

        def arrived() -> bool:
            size = podman("exec", container, "stat", "-c", "%s", "/tmp/up.bin").stdout.strip()
            return size == str(len(data))

        wait_for(arrived, "the upload written whole in the replica")
    inside = podman("exec", container, "sha256sum", "/tmp/up.bin").stdout.split()[0]
    assert inside == hashlib.sha256(data).hexdigest()


def test_a_port_no_container_publishes_is_a_fatal_error(plane: Plane, forwards: list[Forward]) -> None:
    forward = Forward(plane, 9999)
    forwards.append(forward)
    forward.connect().close()
    code, output = forward.ended()
    assert code != 0
    assert "publishes no port 9999" in output, output


def test_a_key_without_connect_gets_no_ticket(plane: Plane, forwards: list[Forward]) -> None:
    name, key, _ = restricted_key(plane, ["view"])
    forward = Forward(plane, 8080, token=key)
    forwards.append(forward)
    forward.connect().close()
    code, output = forward.ended()
    assert code != 0
    assert "Failed to create ticket" in output, output
    assert audited(plane, f"/org/{plane.org}/serviceaccount/{name}") == []


def test_a_revoked_key_ends_an_open_forward(plane: Plane, forwards: list[Forward]) -> None:
    name, key, key_name = restricted_key(plane, ["view", "connect"])
    forward = Forward(plane, 8080, token=key)
    forwards.append(forward)
    assert forward.get().content == INDEX
    held = forward.connect()
    try:
        held.sendall(b"GET / HTTP/1.1\r\nHost: held\r\n")  # httpd waits for the rest
        with plane.api() as api:
            dropped = api.patch(f"/org/{plane.org}/serviceaccount/{name}", json={"$drop/keys": [key_name]})
            assert dropped.status_code == 200, dropped.text
        code, output = forward.ended()
    finally:
        held.close()
    assert code != 0
    assert "Unauthorized" in output, output


def ticket(plane: Plane, body: dict[str, object], token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token or plane.runtime.api.key}"}
    return httpx.post(f"{remote(plane)}/portforward-ticket", json=body, headers=headers)


def socket_request(plane: Plane, ticket_value: str, token: str | None = None) -> WsClient:
    client = WsClient(remote(plane).replace("http://", "ws://") + "/portforward")
    request = {"contextId": "t", "token": token or plane.runtime.api.key, "org": plane.org, "gvc": plane.gvc}
    client.send(
        orjson.dumps({**request, "workload": WORKLOAD, "pod": "web-0", "port": 8080, "ticket": ticket_value}).decode()
    )
    return client


def error_of(message: str | bytes | None) -> dict[str, object]:
    assert isinstance(message, str) and message.startswith("Port-forward error: "), message
    doc = orjson.loads(message[len("Port-forward error: ") :])
    assert isinstance(doc, dict)
    return doc


def test_the_ticket_protocol_spoken_directly(plane: Plane) -> None:
    body = {"org": plane.org, "gvc": plane.gvc, "workload": WORKLOAD, "pod": "web-0", "port": 8080}
    issued = ticket(plane, body)
    assert issued.status_code == 200, issued.text
    value = issued.json()["ticket"]
    client = socket_request(plane, value)
    try:
        client.send(b"GET / HTTP/1.0\r\n\r\n")
        received = b""
        while (message := client.receive()) is not None:
            assert isinstance(message, bytes), message
            received += message
    finally:
        client.close()
    assert received.startswith(b"HTTP/1.") and received.endswith(INDEX)

    unknown = socket_request(plane, "no-such-ticket")
    try:
        assert error_of(unknown.receive())["code"] == 1  # the CLI asks for a new ticket
    finally:
        unknown.close()
    _, other_key, _ = restricted_key(plane, ["view", "connect"])
    stolen = socket_request(plane, value, token=other_key)  # bound to the token it was issued for
    try:
        assert error_of(stolen.receive())["code"] == 1
    finally:
        stolen.close()


def test_ticket_requests_are_checked(plane: Plane) -> None:
    bad = ticket(plane, {"org": plane.org, "gvc": 3, "port": 70000})
    assert bad.status_code == 400, bad.text
    assert {e["path"] for e in bad.json()["details"]["errors"]} == {"gvc", "workload", "port"}
    body = {"org": plane.org, "gvc": plane.gvc, "workload": WORKLOAD, "port": 8080}
    assert ticket(plane, body, token="nope").status_code == 401
    missing = ticket(plane, {**body, "workload": "nope"})
    assert missing.status_code == 404, missing.text
    assert httpx.get(f"{remote(plane)}/portforward-ticket").status_code == 405


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class LocalPlane:
    """A :class:`DataPlane` on an event loop in a thread of this process, for the module's API,
    engine and scope: its tickets follow ``clock``."""

    def __init__(self, runtime: RuntimeServer, clock: Clock) -> None:
        binary = shutil.which(runtime.kit.engine) or runtime.kit.engine
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.plane = DataPlane(runtime.api.url, CliEngine(runtime.kit.engine, binary), runtime.labels)
        self.plane.tickets = Tickets(clock=clock)
        self.port = self._run(self.plane.start("127.0.0.1", 0))

    def _run(self, coroutine: Coroutine[object, object, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def close(self) -> None:
        self._run(self.plane.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


def test_an_expired_ticket_is_replaced_by_the_cli(plane: Plane, forwards: list[Forward]) -> None:
    clock = Clock()
    local = LocalPlane(plane.runtime, clock)
    try:
        name, key, _ = restricted_key(plane, ["view", "connect"])
        env = {"TERMINAL_SERVER_URL": f"http://127.0.0.1:{local.port}/location/{LOCATION}"}
        forward = Forward(plane, 8080, token=key, env=env)
        forwards.append(forward)
        assert forward.get().content == INDEX
        clock.now += 10_000  # past any ticket's life
        with pytest.raises(httpx.HTTPError):
            forward.get()  # this connection finds the ticket expired; the CLI gets a new one
        assert forward.get().content == INDEX
        assert forward.proc.poll() is None  # an expired ticket is not fatal
        assert len(audited(plane, f"/org/{plane.org}/serviceaccount/{name}")) == 2  # two tickets
    finally:
        local.close()
