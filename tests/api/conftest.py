"""API tests run through real HTTP against a real server, once per storage backend."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.oidc_issuer import AUDIENCE, Issuer
from tests.support.server import ServerProcess, serving

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    """A real OpenID Connect issuer on loopback; every API server signs users in through it."""
    with Issuer() as running:
        yield running


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, issuer: Issuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    args = ("--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE)
    with serving(request.param, tmp_path_factory.mktemp("plinth"), args) as proc:
        yield proc


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> str:
    """A name unique to the test, valid under the common name rule."""
    import hashlib

    return "t" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]
