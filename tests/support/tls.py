"""Self-signed certificates: for 127.0.0.1 (tests of HTTPS serving and client trust), and as PEM
text for any name (TLS secrets)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed_pem(common_name: str, ip: str | None = None) -> tuple[bytes, bytes]:
    """A fresh self-signed certificate for ``common_name`` (and ``ip`` as its subject
    alternative name) and its unencrypted key, as PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    if ip is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]), False)
    cert = builder.sign(key, hashes.SHA256())
    pem_key = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


def self_signed(folder: Path) -> tuple[Path, Path]:
    """Write ``cert.pem`` and ``key.pem`` for 127.0.0.1 into ``folder``; returns their paths."""
    cert, key = self_signed_pem("127.0.0.1", "127.0.0.1")
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert)
    key_path.write_bytes(key)
    return cert_path, key_path
