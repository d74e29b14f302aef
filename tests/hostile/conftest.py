"""Hostile requests, through real HTTP against a real server, once per storage backend.

Each module gets one server (one worker, as most deployments run each process): a request that
holds the worker's event loop holds every other request of that process, which is what the
tests here look for (``answering.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import httpx
import pytest

from tests.api.authz_support import service_account_with_key
from tests.support.server import ServerProcess, serving

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with serving(request.param, tmp_path_factory.mktemp("plinth")) as proc:
        yield proc


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture(scope="module")
def nobody(server: ServerProcess, api: httpx.Client) -> Iterator[httpx.Client]:
    """A client whose key belongs to a service account no policy grants anything."""
    key = service_account_with_key(api, server.org, "hostile-nobody")
    with server.client(key) as client:
        yield client


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    """A name unique to the test, valid under the common name rule."""
    return "t" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]
