"""API tests run through real HTTP against a real server, once per storage backend."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import pg
from tests.support.server import ServerProcess, start_server

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    database_url = pg.create_database() if request.param == "postgres" else None
    try:
        proc = start_server(tmp_path_factory.mktemp("plinth"), database_url)
        try:
            yield proc
        finally:
            proc.stop()
    finally:
        if database_url:
            pg.drop_database(database_url)


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    """A name unique to the test, valid under the common name rule."""
    import hashlib

    return "t" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]
