"""TLS with a self-signed certificate: refused without ``-k``, accepted with it (issue 4)."""

from __future__ import annotations

import datetime
import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.cli.conftest import PlinthCli
from tests.support.server import ServerProcess, start_server


def self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


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
