"""Oversized headers and slow clients, against a real ``plinth serve`` over raw sockets.

The behaviour under test is about time (a slow client is cut off), so these tests measure it,
generously: the slow client is still open while other requests complete, and it is cut off
after roughly ``--request-timeout``, never much sooner and not for ever.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.server import ServerProcess, start_server

TIMEOUT_S = 3.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = start_server(tmp_path_factory.mktemp("limits"), extra_args=("--request-timeout", str(TIMEOUT_S)))
    try:
        yield proc
    finally:
        proc.stop()


def _connect(server: ServerProcess) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S * 10)
    return sock


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read until the server closes; parse the status line, headers and body."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def _read_one(sock: socket.socket) -> bytes:
    """One response on a connection that stays open (its length from content-length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(v for k, v in (line.split(b": ", 1) for line in head.split(b"\r\n")[1:]) if k == b"content-length")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _is_error(status: int, headers: dict[str, str], body: bytes, want: int, code: str) -> dict[str, object]:
    assert status == want, body
    parsed = orjson.loads(body)
    assert parsed["status"] == want and parsed["code"] == code and parsed["id"] == headers["x-request-id"]
    assert headers["connection"] == "close"
    return parsed


def _served_promptly(server: ServerProcess, count: int = 5) -> None:
    with server.client() as api:
        for _ in range(count):
            assert api.get("/org/acme", timeout=TIMEOUT_S).status_code == 200


def _still_open(sock: socket.socket) -> bool:
    """True while the server has neither answered nor closed the connection."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)  # an answer, or b"" for a close
        return False
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)


# -- oversized headers ---------------------------------------------------------------------------


def test_a_100_kb_header_is_431_and_the_server_goes_on(server: ServerProcess) -> None:
    big = "a" * 100_000
    r = httpx.get(f"{server.url}/org/acme", headers={"Authorization": f"Bearer {server.key}", "X-Big": big})
    assert r.status_code == 431
    body = r.json()
    assert body["code"] == "headers_too_large" and body["details"] == {"limit": 32768}
    assert body["id"] == r.headers["x-request-id"]
    assert server.process.poll() is None
    _served_promptly(server)


def test_many_small_headers_past_the_limit_are_431(server: ServerProcess) -> None:
    headers = {f"x-h{i}": "v" * 10 for i in range(2000)}
    assert httpx.get(f"{server.url}/healthz", headers=headers).status_code == 431


def test_a_long_url_counts_towards_the_limit(server: ServerProcess) -> None:
    assert httpx.get(f"{server.url}/healthz?{'q' * 40_000}").status_code == 431


def test_headers_just_under_the_limit_are_served(server: ServerProcess) -> None:
    r = httpx.get(f"{server.url}/healthz", headers={"X-Big": "a" * 30_000})
    assert r.status_code == 200


def test_a_huge_header_sent_in_pieces_is_cut_off_without_reading_it_all(server: ServerProcess) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        sent = 0
        with pytest.raises(OSError):  # the server stops reading and closes: a broken pipe or a reset
            for _ in range(10_000):  # up to 80 MB, never finished
                sock.sendall(b"a" * 8192)
                sent += 8192
        assert sent < 10_000 * 8192
    _served_promptly(server)


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n",
    ],
)
def test_a_request_that_is_not_http_gets_the_usual_error_body(server: ServerProcess, raw: bytes) -> None:
    with _connect(server) as sock:
        sock.sendall(raw)
        status, headers, body = _read_response(sock)
    _is_error(status, headers, body, 400, "bad_request")
    _served_promptly(server, count=1)


# -- slow clients --------------------------------------------------------------------------------


def test_a_client_trickling_its_headers_is_cut_off_while_others_are_served(server: ServerProcess) -> None:
    request = f"GET /org/acme HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n".encode()
    with _connect(server) as slow:
        started = time.monotonic()
        for byte in request[:20]:  # one byte at a time, never reaching the blank line
            slow.sendall(bytes([byte]))
            time.sleep(0.02)
        _served_promptly(server)
        assert _still_open(slow), "the slow client was cut off before the others were served"
        status, headers, body = _read_response(slow)
        elapsed = time.monotonic() - started
    _is_error(status, headers, body, 408, "request_timeout")
    assert TIMEOUT_S * 0.8 <= elapsed < TIMEOUT_S + 10


def test_a_client_that_connects_and_says_nothing_is_cut_off(server: ServerProcess) -> None:
    with _connect(server) as idle:
        started = time.monotonic()
        _served_promptly(server)
        status, headers, body = _read_response(idle)
        elapsed = time.monotonic() - started
    _is_error(status, headers, body, 408, "request_timeout")
    assert TIMEOUT_S * 0.8 <= elapsed < TIMEOUT_S + 10


def test_a_client_trickling_its_body_is_cut_off_and_nothing_is_stored(server: ServerProcess) -> None:
    body = orjson.dumps({"name": "slowpoke", "description": "d" * 200})
    head = (
        f"POST /org/acme/gvc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with _connect(server) as slow:
        slow.sendall(head)
        started = time.monotonic()
        for byte in body[:10]:
            slow.sendall(bytes([byte]))
            time.sleep(0.05)
        _served_promptly(server)
        assert _still_open(slow)
        status, headers, raw = _read_response(slow)
        elapsed = time.monotonic() - started
    err = _is_error(status, headers, raw, 408, "request_timeout")
    assert "body" in str(err["message"])
    assert TIMEOUT_S * 0.8 <= elapsed < TIMEOUT_S + 10
    with server.client() as api:
        assert api.get("/org/acme/gvc/slowpoke").status_code == 404


def test_many_slow_clients_at_once_do_not_hold_back_the_others(server: ServerProcess) -> None:
    slow = [_connect(server) for _ in range(50)]
    try:
        for sock in slow:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        _served_promptly(server, count=20)
        assert all(_still_open(sock) for sock in slow)
        assert all(_read_response(sock)[0] == 408 for sock in slow)
    finally:
        for sock in slow:
            sock.close()


def test_a_keep_alive_connection_gets_the_full_timeout_for_each_request(server: ServerProcess) -> None:
    with _connect(server) as sock:
        for _ in range(3):
            time.sleep(TIMEOUT_S * 0.6)  # each request starts more than a timeout after the connection
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _read_one(sock).startswith(b"HTTP/1.1 200 ")


def test_the_timeout_is_a_serve_option(tmp_path: Path) -> None:
    proc = start_server(tmp_path / "data", extra_args=("--request-timeout", "0.5"))
    try:
        host, port = proc.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as idle:
            started = time.monotonic()
            status = _read_response(idle)[0]
            elapsed = time.monotonic() - started
        assert status == 408 and elapsed < TIMEOUT_S  # the module's server would wait TIMEOUT_S
    finally:
        proc.stop()
