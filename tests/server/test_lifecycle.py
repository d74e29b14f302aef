"""Starting and stopping ``plinth serve`` as an operator sees it: the port is bound before
anything is announced or bootstrapped, and SIGTERM finishes in-flight requests and exits 0."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from plinth.cli.errors import ExitCode
from plinth.server.draining import Drain
from tests.support.server import start_server


def _serve(data_dir: Path, port: int, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "plinth", "serve", "--port", str(port), "--data-dir", str(data_dir), *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    return subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)


def test_a_port_in_use_is_one_line_before_anything_is_bootstrapped(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(tmp_path / "second", port)
    assert done.returncode == ExitCode.CANNOT_LISTEN == 4
    assert done.stdout == ""  # no "Plinth serving", no admin key
    assert done.stderr.splitlines() == [
        f"plinth: port {port} on 127.0.0.1 is already in use (another plinth serve, or another program, "
        "listens there): stop it, or choose another --port"
    ]
    assert not (tmp_path / "second").exists()  # no store, no key file, no secrets key


def test_a_second_plinth_on_the_same_port_leaves_the_first_serving(tmp_path: Path) -> None:
    first = start_server(tmp_path / "first")
    try:
        port = int(first.url.rsplit(":", 1)[1])
        done = _serve(tmp_path / "second", port, "--workers", "2")
        assert done.returncode == ExitCode.CANNOT_LISTEN
        assert f"port {port}" in done.stderr and "Admin key" not in done.stdout + done.stderr
        with first.client() as api:
            assert api.get("/org/acme").status_code == 200
    finally:
        first.stop()


def _post_head(port: int, body: bytes, key: str) -> socket.socket:
    """A POST whose headers and the first half of its body are sent; the rest is the caller's."""
    conn = socket.create_connection(("127.0.0.1", port))
    head = (
        f"POST /org/acme/gvc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    conn.sendall(head + body[: len(body) // 2])
    return conn


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_finishes_the_request_in_flight_then_exits_0(tmp_path: Path, workers: int) -> None:
    server = start_server(tmp_path / "data", workers=workers)
    port = int(server.url.rsplit(":", 1)[1])
    body = b'{"name": "in-flight", "description": "' + b"x" * 200 + b'"}'
    conns = [_post_head(port, body.replace(b"in-flight", f"in-flight-{i}".encode()), server.key) for i in range(3)]
    time.sleep(0.2)  # let the workers read the heads (sequencing only; nothing is timed)
    server.process.send_signal(signal.SIGTERM)  # to the server only, as a supervisor does
    deadline = time.monotonic() + 10
    while not _refused(port):  # it stops accepting first
        assert time.monotonic() < deadline, "the server kept accepting connections after SIGTERM"
        time.sleep(0.05)
    answers = []
    for i, conn in enumerate(conns):
        rest = body.replace(b"in-flight", f"in-flight-{i}".encode())
        conn.sendall(rest[len(rest) // 2 :])
        answers.append(conn.recv(65536).split(b"\n", 1)[0] + b"\n")
        conn.close()
    assert answers == [b"HTTP/1.1 201 Created\r\n"] * 3
    assert server.process.wait(15) == 0
    restarted = start_server(tmp_path / "data", port=port)
    try:
        with restarted.client() as api:
            names = {item["name"] for item in api.get("/org/acme/gvc").json()["items"]}
        assert {"in-flight-0", "in-flight-1", "in-flight-2"} <= names
    finally:
        restarted.stop()


def test_an_idle_server_stops_at_once_on_sigterm_with_exit_0(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data")
    with server.client() as api:  # a keep-alive connection left open does not hold the stop
        assert api.get("/org/acme").status_code == 200
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(15) == 0
    assert "Traceback" not in server.log_path.read_text()


def test_port_0_serves_on_the_free_port_it_announces(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "plinth", "serve", "--port", "0", "--data-dir", str(tmp_path / "d")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("Plinth serving http://127.0.0.1:")
        url = first.split()[2]
        assert not url.endswith(":0")
        for _ in range(200):
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0


def test_the_stop_signal_drains_first_then_reaches_the_handler_before_it() -> None:
    """``Drain.listen`` chains in front of uvicorn's handler: the hooks run (the watch stream's
    final events) and the previous handler still gets the signal."""
    heard: list[int] = []
    ran: list[str] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: heard.append(signum))
    try:
        drain = Drain()

        async def hook() -> None:
            ran.append("final event sent")

        async def scenario() -> None:
            drain.on_drain(hook)
            drain.listen(asyncio.get_running_loop())
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100):
                if ran:
                    break
                await asyncio.sleep(0.01)
            await drain.begin()  # a second begin waits for the first; the hooks ran once

        asyncio.run(scenario())
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert heard == [signal.SIGTERM] and ran == ["final event sent"] and drain.draining


def test_a_failing_drain_hook_does_not_stop_the_others() -> None:
    drain, ran = Drain(), []

    async def broken() -> None:
        raise RuntimeError("boom")

    async def fine() -> None:
        ran.append("ok")

    drain.on_drain(broken)
    drain.on_drain(fine)
    asyncio.run(drain.begin())
    assert ran == ["ok"]
