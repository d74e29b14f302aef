"""The bounded retry (issue 4): which failures are retried, how often, and that waiting goes
through the injected sleep. No timing assertions: the sleeps are recorded, not measured."""

from __future__ import annotations

import socket

import pytest

from plinth.client import ApiClient, RetryPolicy, TransportError
from plinth.errors import APIError
from tests.cli.canned_server import Canned, CannedServer


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_refused_connection_is_retried_a_few_times_then_reported() -> None:
    slept: list[float] = []
    client = ApiClient(f"http://127.0.0.1:{closed_port()}", retry=RetryPolicy(), sleep=slept.append)
    with pytest.raises(TransportError) as failure:
        client.request("POST", "/org/acme/domain", {"name": "x"})
    assert failure.value.code == "ECONNREFUSED"
    assert failure.value.attempts == RetryPolicy().attempts
    assert len(slept) == RetryPolicy().attempts - 1
    assert sum(slept) <= RetryPolicy().budget


def test_busy_server_is_retried_for_get_but_not_for_post() -> None:
    routes = {
        ("GET", "/busy"): Canned(503, '{"status":503,"message":"busy","code":"unavailable"}'),
        ("POST", "/busy"): Canned(502, "bad gateway", content_type="text/plain"),
        ("GET", "/limited"): Canned(429, '{"status":429,"message":"slow down"}', headers=[("Retry-After", "1")]),
    }
    with CannedServer(routes) as server:
        slept: list[float] = []
        client = ApiClient(server.endpoint, retry=RetryPolicy(attempts=3), sleep=slept.append)
        with pytest.raises(APIError) as busy:
            client.request("GET", "/busy")
        assert busy.value.status == 503
        assert len(slept) == 2
        slept.clear()
        with pytest.raises(APIError) as gateway:
            client.request("POST", "/busy", {"a": 1})
        assert gateway.value.status == 502 and slept == []
        with pytest.raises(APIError):
            client.request("GET", "/limited")
        assert slept == [1.0, 1.0]  # Retry-After is honoured
        client.close()
    assert [r.method for r in server.requests] == ["GET", "GET", "GET", "POST", "GET", "GET", "GET"]
