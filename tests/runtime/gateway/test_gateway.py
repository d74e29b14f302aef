"""The gateway for real: Caddy from Debian, configured through its admin API, in front of two
real containers (``alpha`` and ``beta``, the test image's ``/cgi-bin/echo`` telling which one
answered and what the request looked like on arrival). One Caddy and one pair of containers
serve the whole module; everything is reached on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from plinth.runtime.gateway import (
    GatewayError,
    Route,
    RouteTable,
    caddy_config,
    loopback_address,
    reloads_keep_queued_connections,
)
from tests.runtime.gateway.conftest import ECHO, Gateway, replica_of
from tests.support import containers


def test_routes_by_host_and_longest_prefix(gateway: Gateway) -> None:
    gateway.apply(
        Route(hosts=["alpha.test"], upstreams=[gateway.alpha]),
        Route(hosts=["beta.test"], upstreams=[gateway.beta]),
        Route(hosts=["mixed.test"], prefix="/", upstreams=[gateway.alpha]),
        Route(hosts=["mixed.test"], prefix=f"{ECHO}/b", upstreams=[gateway.beta]),
        Route(prefix=f"{ECHO}/any", upstreams=[gateway.beta]),
    )
    assert replica_of(gateway.get(ECHO, "alpha.test")) == "alpha"
    assert replica_of(gateway.get(ECHO, "beta.test")) == "beta"
    assert replica_of(gateway.get(ECHO, "alpha.test:8080")) == "alpha"  # a port in Host still matches
    assert replica_of(gateway.get(f"{ECHO}/b/x", "mixed.test")) == "beta"
    assert replica_of(gateway.get(f"{ECHO}/a", "mixed.test")) == "alpha"
    assert replica_of(gateway.get(f"{ECHO}/any", "elsewhere.test")) == "beta"
    assert gateway.get(ECHO, "elsewhere.test").status_code == 404


def test_replace_prefix_host_prefix_and_request_headers(gateway: Gateway) -> None:
    gateway.apply(
        Route(
            hosts=["rw.test"],
            prefix="/api",
            replace_prefix=ECHO,
            headers={"X-Plinth-Test": "via-%REQUESTED_SERVER_NAME%"},
            upstreams=[gateway.alpha],
        ),
        Route(host_prefix="api.", upstreams=[gateway.beta]),
        Route(upstreams=[gateway.alpha]),
    )
    response = gateway.get("/api/x?q=1", "rw.test")
    assert replica_of(response) == "alpha"
    assert f"uri={ECHO}/x?q=1" in response.text.split()
    assert "header=via-rw.test" in response.text.split()
    assert replica_of(gateway.get(ECHO, "api.example.test")) == "beta"
    assert replica_of(gateway.get(ECHO, "web.example.test")) == "alpha"


def test_a_route_without_ready_replicas_answers_503_at_once(gateway: Gateway) -> None:
    gateway.apply(Route(hosts=["down.test"], upstreams=[], name="/org/org1/gvc/main/workload/down"))
    response = gateway.get(ECHO, "down.test")
    assert response.status_code == 503
    assert "/org/org1/gvc/main/workload/down" in response.text


def test_the_external_firewall_answers_403_outside_its_ranges(gateway: Gateway) -> None:
    gateway.apply(
        Route(hosts=["closed.test"], allow_cidrs=(), upstreams=[gateway.alpha]),
        Route(hosts=["lan.test"], allow_cidrs=["10.0.0.0/8", "192.168.0.0/16"], upstreams=[gateway.alpha]),
        Route(hosts=["local.test"], allow_cidrs=["10.0.0.0/8", "127.0.0.0/8"], upstreams=[gateway.alpha]),
        Route(hosts=["closed-down.test"], allow_cidrs=(), upstreams=[]),
        Route(hosts=["lan-down.test"], allow_cidrs=["10.0.0.0/8"], upstreams=[]),
    )
    assert gateway.get(ECHO, "closed.test").status_code == 403
    assert gateway.get(ECHO, "lan.test").status_code == 403
    assert replica_of(gateway.get(ECHO, "local.test")) == "alpha"
    assert gateway.get(ECHO, "closed-down.test").status_code == 403  # the firewall speaks first
    assert gateway.get(ECHO, "lan-down.test").status_code == 403


#: What a client sees when it sends on a kept-alive connection the server closed as idle at the
#: same moment (before any byte of an answer): HTTP/1.1 clients retry idempotent requests then.
CLOSED_WHILE_IDLE = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def test_reconfiguration_under_load_loses_no_request(gateway: Gateway) -> None:
    """A client thread sends requests (alternately on a new connection and on a kept-alive one)
    while the main thread reloads the configuration 20 times, switching the upstream.

    On a reload Caddy's old server closes its *idle* kept-alive connections (Go's graceful
    shutdown); a request sent on one at that instant meets a reset before any answer, and an
    HTTP/1.1 client retries such an idempotent request on a new connection (RFC 9112, 9.3.1),
    as browsers do; this client does so once. Nothing else is retried: a request on a new
    connection, or one the server had begun to answer, must simply succeed. The kernel must
    hand the connections queued on the closing listener to the new one (``tcp_migrate_req``)."""
    containers.ensure_tcp_migrate_req()
    assert reloads_keep_queued_connections() is True
    gateway.apply(Route(hosts=["load.test"], upstreams=[gateway.alpha]))
    failures: list[str] = []
    seen: dict[str, int] = {}
    done = threading.Event()
    bound = 5000  # the stream is bounded even if the main thread were to stall

    def once(i: int, kept_alive: httpx.Client) -> httpx.Response:
        if i % 2 == 0:
            return gateway.get(ECHO, "load.test")
        try:
            return gateway.get(ECHO, "load.test", kept_alive)
        except CLOSED_WHILE_IDLE:
            return gateway.get(ECHO, "load.test")

    def client() -> None:
        with httpx.Client(timeout=10) as kept_alive:
            for i in range(bound):
                if done.is_set():
                    return
                try:
                    replica = replica_of(once(i, kept_alive))
                    seen[replica] = seen.get(replica, 0) + 1
                except (httpx.HTTPError, AssertionError) as exc:
                    failures.append(f"request {i}: {exc!r}")

    thread = threading.Thread(target=client)
    thread.start()
    try:
        for reload in range(20):
            upstream = gateway.beta if reload % 2 == 0 else gateway.alpha
            gateway.apply(
                Route(hosts=["load.test"], upstreams=[upstream]),
                Route(hosts=[f"extra-{reload}.test"], upstreams=[gateway.alpha]),  # a different document each time
            )
            time.sleep(0.05)
    finally:
        done.set()
        thread.join()
    assert failures == []
    assert set(seen) == {"alpha", "beta"}  # the reloads took effect while requests flowed


def test_a_refused_configuration_raises_with_caddys_reason_and_keeps_the_old_one(gateway: Gateway) -> None:
    gateway.apply(Route(hosts=["keep.test"], upstreams=[gateway.alpha]))
    broken = caddy_config(RouteTable(()), gateway.listen, gateway.caddy.admin)
    broken["apps"]["http"]["servers"]["gateway"]["routes"] = [{"handle": [{"handler": "no-such-handler"}]}]
    with pytest.raises(GatewayError) as raised:
        asyncio.run(gateway.caddy.load(broken))
    assert "no-such-handler" in str(raised.value)
    assert replica_of(gateway.get(ECHO, "keep.test")) == "alpha"


def test_the_gateway_listens_on_loopback_only(gateway: Gateway) -> None:
    for address in ("127.0.0.1:8080", "127.0.0.2:80", "[::1]:8080", "localhost:80"):
        assert loopback_address(address) == address
    for address in ("0.0.0.0:8080", "192.168.1.2:80", "[::]:80", "example.com:80", "127.0.0.1", "127.0.0.1:0"):
        with pytest.raises(ValueError):
            loopback_address(address)
    with pytest.raises(ValueError):
        asyncio.run(gateway.caddy.apply(RouteTable(()), "0.0.0.0:8080"))


def test_reloads_keep_queued_connections_reads_the_kernel_setting(tmp_path: Path) -> None:
    setting = tmp_path / "tcp_migrate_req"
    setting.write_text("1\n")
    assert reloads_keep_queued_connections(setting) is True
    setting.write_text("0\n")
    assert reloads_keep_queued_connections(setting) is False
    assert reloads_keep_queued_connections(tmp_path / "absent") is None


def test_caddy_config_orders_routes_and_escapes_rewrites() -> None:
    table = RouteTable(
        (
            Route(prefix="/", upstreams=[1]),
            Route(hosts=["a.test"], prefix="/", upstreams=[2]),
            Route(hosts=["a.test"], prefix="/long/er", replace_prefix="/$1", upstreams=[3]),
            Route(hosts=["a.test"], regex="^/r2", upstreams=[4]),
            Route(hosts=["a.test"], regex="^/r1", upstreams=[5]),
        )
    )
    config: Any = caddy_config(table, "127.0.0.1:1", "127.0.0.1:2")
    routes = config["apps"]["http"]["servers"]["gateway"]["routes"]
    dials = [r["handle"][-1].get("upstreams", [{}])[0].get("dial") for r in routes]
    assert dials == ["127.0.0.1:4", "127.0.0.1:5", "127.0.0.1:3", "127.0.0.1:2", "127.0.0.1:1", None]
    rewrite = routes[2]["handle"][0]
    assert rewrite == {"handler": "rewrite", "path_regexp": [{"find": "^/long/er", "replace": "/$$1"}]}
    assert routes[-1]["handle"][0]["status_code"] == 404
    assert config["admin"] == {"listen": "127.0.0.1:2", "config": {"persist": False}}
    assert config["apps"]["http"]["servers"]["gateway"]["listen"] == ["127.0.0.1:1"]
