"""TLS with a self-signed certificate: refused without ``-k``, accepted with it (issue 4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import PlinthCli
from tests.support.server import ServerProcess, start_server
from tests.support.tls import self_signed


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("plinth-tls")
    cert, key = self_signed(folder)
    process = start_server(
        folder / "data",
        org="acme",
        extra_args=("--tls-cert", str(cert), "--tls-key", str(key)),
        scheme="https",
        verify=str(cert),
    )
    try:
        yield process
    finally:
        process.stop()


def test_self_signed_certificate_is_refused_without_insecure(tls_server: ServerProcess, tmp_path: Path) -> None:
    cli = PlinthCli(home=tmp_path, endpoint=tls_server.url, token=tls_server.key)
    run = cli("rest", "get", "/org/acme", "-o", "json")
    assert run.code == 1
    assert run.stdout == ""
    assert json.loads(run.stderr) == [{"code": "DEPTH_ZERO_SELF_SIGNED_CERT", "message": "self-signed certificate"}]


def test_insecure_flag_and_profile_setting_accept_it(tls_server: ServerProcess, tmp_path: Path) -> None:
    cli = PlinthCli(home=tmp_path, endpoint=tls_server.url, token=tls_server.key)
    assert cli("rest", "get", "/org/acme", "-k", "-o", "names").stdout == "acme\n"
    bare = PlinthCli(home=tmp_path)
    bare("profile", "create", "tls", "--endpoint", tls_server.url, "--token", tls_server.key, "--insecure")
    assert bare("rest", "get", "/org/acme", "-o", "names").stdout == "acme\n"
