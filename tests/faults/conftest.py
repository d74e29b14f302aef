"""Fault tests: real ``plinth serve`` processes killed, partitioned from or starved of their store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import pg
from tests.support.tcpproxy import TcpProxy


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    """A proxy in front of the shared PostgreSQL server, which the tests may cut."""
    host, port = pg.host_port(pg.require_postgres())
    with TcpProxy(host, port) as running:
        yield running


@pytest.fixture
def proxied_db(fresh_pg_url: str, proxy: TcpProxy) -> str:
    """A fresh database, reached through ``proxy``."""
    return pg.with_address(fresh_pg_url, "127.0.0.1", proxy.port)
