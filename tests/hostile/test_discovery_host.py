"""``/discovery`` does not take its URLs from the request's ``Host`` header (issue 21, defect 7).

It answered every endpoint at ``http://{Host}``, so anyone who could get a response cached, or a
client to ask through a proxy that keeps the header, could point clients (the official CLI reads
its endpoints there) at a host of their choosing. Now every URL is the configured public URL
(``--public-url`` / ``PLINTH_PUBLIC_URL``), by default the listen address (docs/api.md).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.hostile.conftest import BACKENDS
from tests.support.server import ServerProcess, serving

PUBLIC = "https://api.plinth.example:8443/base"


def _endpoints(url: str, host: str | None = None) -> dict[str, str]:
    headers = {"Host": host} if host else {}
    response = httpx.get(f"{url}/discovery", headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json()["endpoints"])


def test_the_host_header_does_not_steer_discovery(server: ServerProcess) -> None:
    plain = _endpoints(server.url)
    for host in ("evil.example", "evil.example:1234", f"{server.url.removeprefix('http://')}@evil.example"):
        endpoints = _endpoints(server.url, host)
        assert endpoints == plain
        assert not any("evil" in url for url in endpoints.values()), endpoints
    assert plain["api"] == server.url
    assert plain["terraform-exporter"] == f"{server.url}/export/terraform"


@pytest.fixture(scope="module", params=BACKENDS)
def public(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server configured with a public URL (trailing slash and all)."""
    with serving(request.param, tmp_path_factory.mktemp("public"), ("--public-url", PUBLIC + "/")) as proc:
        yield proc


def test_a_configured_public_url_names_every_endpoint(public: ServerProcess) -> None:
    endpoints = _endpoints(public.url, "evil.example")
    assert endpoints["api"] == PUBLIC
    assert endpoints["k8s-crd-exporter"] == f"{PUBLIC}/export/crd"
    assert all(url.startswith(PUBLIC) for url in endpoints.values()), endpoints


@pytest.mark.parametrize("bad", ["ftp://files.example", "api.example.com", "https://", "https://a.example/?x=1"])
def test_a_public_url_that_is_not_one_is_refused_at_start(tmp_path: Path, bad: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "plinth", "serve", "--data-dir", str(tmp_path), "--port", "0", "--public-url", bad],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--public-url" in result.stderr
