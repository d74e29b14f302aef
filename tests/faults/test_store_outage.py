"""The store going away (PostgreSQL): fail fast with 503, say not ready, recover by itself.

The shared PostgreSQL server is never stopped; the server under test reaches it through a
proxy (``tests/support/tcpproxy.py``) that refuses connections, as a stopped server does, or
swallows every byte, as a network partition does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.support.server import ServerProcess, start_server
from tests.support.tcpproxy import TcpProxy

pytestmark = pytest.mark.postgres

#: A refused database is known at once; the pool waits this long for a connection at most.
FAST_S = 4.0
#: A partitioned database says nothing: the server's bound on one operation (5 s) ends the wait.
PARTITION_S = 7.0
#: After the database returns, requests succeed again within this, without a restart.
RECOVERY_S = 5.0
UNAVAILABLE = "The data store is unavailable; try again shortly"


@pytest.fixture
def server(tmp_path: Path, proxied_db: str) -> Iterator[ServerProcess]:
    proc = start_server(tmp_path / "data", proxied_db)
    try:
        yield proc
    finally:
        proc.stop()


def _timed(call: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def _assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["code"] == "unavailable" and body["message"] == UNAVAILABLE
    assert response.headers["retry-after"] == "1"
    assert "127.0.0.1" not in response.text  # the driver's words, naming hosts, stay in the log


def _outage_answers(server: ServerProcess, bound: float, rounds: int) -> None:
    """Reads, writes and /readyz all answer 503 within ``bound`` seconds, round after round."""
    with server.client() as api:
        for i in range(rounds):
            for call in (
                lambda: api.get("/org/acme/gvc/g1"),
                lambda i=i: api.patch("/org/acme/gvc/g1", json={"tags": {"during": i}}),  # type: ignore[misc]
            ):
                response, took = _timed(call)
                _assert_unavailable(response)
                assert took < bound, f"a 503 took {took:.1f} s"
            ready, took = _timed(lambda: api.get("/readyz"))
            assert ready.status_code == 503 and ready.json()["status"] == "unavailable", ready.text
            assert took < bound, f"/readyz took {took:.1f} s"
            assert api.get("/healthz").status_code == 200  # alive: a restart would not help


def _recovers(server: ServerProcess, proxy: TcpProxy) -> float:
    """Restore the database; return how long until a read succeeded, then check a write."""
    proxy.restore()
    restored = time.monotonic()
    with server.client() as api:
        while True:
            took = time.monotonic() - restored
            assert took < RECOVERY_S, "the server did not recover by itself"
            response = api.get("/org/acme/gvc/g1")
            if response.status_code == 200:
                break
            _assert_unavailable(response)
            time.sleep(0.1)
        assert api.get("/readyz").status_code == 200
        patched = api.patch("/org/acme/gvc/g1", json={"tags": {"after": True}})
        assert patched.status_code == 200, patched.text
        assert api.get("/org/acme/gvc/g1").json() == patched.json()
    return took


def _create_g1(server: ServerProcess) -> None:
    with server.client() as api:
        assert api.post("/org/acme/gvc", json={"name": "g1"}).status_code == 201


def test_a_stopped_database_gives_fast_503s_and_the_server_recovers_by_itself(
    server: ServerProcess, proxy: TcpProxy
) -> None:
    _create_g1(server)
    proxy.refuse()
    _outage_answers(server, FAST_S, rounds=3)
    _recovers(server, proxy)
    with server.client() as api:
        # The writes refused during the outage did not happen.
        assert "during" not in api.get("/org/acme/gvc/g1").json()["tags"]


def test_a_partitioned_database_gives_503s_within_the_operation_bound_not_a_hang(
    server: ServerProcess, proxy: TcpProxy
) -> None:
    _create_g1(server)
    proxy.blackhole()
    # Several at once: each stuck connection and each new one must give up on its own.
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: _outage_answers(server, PARTITION_S, rounds=1), range(4)))
    _recovers(server, proxy)


def test_connections_the_database_dropped_are_replaced_before_a_request_uses_them(
    server: ServerProcess, proxy: TcpProxy, proxied_db: str, pg_url: str
) -> None:
    """A database restart leaves every pooled connection dead; none may fail a request."""
    _create_g1(server)

    def burst() -> list[int]:
        # Lists: a GET of one item may come from the record cache; a list always uses a connection.
        def get(_: int) -> int:
            with server.client() as api:
                return api.get("/org/acme/gvc").status_code

        with ThreadPoolExecutor(16) as pool:
            return list(pool.map(get, range(48)))

    assert burst() == [200] * 48
    database = proxied_db.rsplit("/", 1)[1]
    assert _sessions(pg_url, database) >= 3, "the burst should have grown the pool"
    proxy.refuse()  # resets every connection, as a restart does ...
    proxy.restore()  # ... and the database is back before the next request
    assert burst() == [200] * 48


def test_a_server_started_while_the_database_is_unreachable_starts_not_ready_and_becomes_ready(
    tmp_path: Path, proxied_db: str, proxy: TcpProxy
) -> None:
    """The choice for operators behind a load balancer: no crash loop, not ready until it can be."""
    proxy.refuse()
    server = start_server(tmp_path / "data", proxied_db, ready_path="/healthz")
    try:
        assert server.key == "", "a new store cannot have been bootstrapped yet"
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 503 and ready.json()["status"] == "starting", ready.text
        answer = httpx.get(f"{server.url}/org/acme", headers={"Authorization": "Bearer whatever"})
        assert answer.status_code == 503 and "not reachable yet" in answer.json()["message"]
        assert answer.headers["retry-after"] == "1"
        log = server.log_path.read_text()
        assert "the database is not reachable" in log and "starting not ready" in log
        assert "Not ready: /readyz answers 503 until the database is reachable" in log

        proxy.restore()
        deadline = time.monotonic() + RECOVERY_S
        while httpx.get(f"{server.url}/readyz").status_code != 200:
            assert time.monotonic() < deadline, "the server did not become ready by itself"
            time.sleep(0.1)
        # The worker that reached the store bootstrapped it: the admin key works.
        with server.client(server.read_key()) as api:
            assert api.get("/org/acme").json()["name"] == "acme"
        assert "Admin key (shown once" in server.log_path.read_text()
    finally:
        server.stop()


def _sessions(admin_url: str, database: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)).fetchone()
    assert row is not None
    return int(row[0])
