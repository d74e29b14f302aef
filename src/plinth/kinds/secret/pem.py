"""PEM checks for ``tls`` and ``keypair`` secrets, with ``cryptography``.

Each function answers a problem (a message that names no value) or ``None``; the keys and
certificates it parses are only compared, never kept.
"""

from __future__ import annotations

from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

_SPKI = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
_OPENSSH_PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY-----"


def _public_bytes(key: Any) -> bytes | None:
    try:
        return bytes(key.public_bytes(*_SPKI))
    except (AttributeError, ValueError, TypeError, UnsupportedAlgorithm):
        return None


def certificates(text: str) -> tuple[list[x509.Certificate] | None, str | None]:
    """The certificates of a PEM text, or the problem."""
    if "-----BEGIN CERTIFICATE-----" not in text:
        return None, "is not a PEM certificate"
    try:
        certs = x509.load_pem_x509_certificates(text.encode("utf-8"))
    except (ValueError, UnsupportedAlgorithm):
        return None, "is not a PEM certificate (it does not parse)"
    return certs, None


def private_key(text: str, passphrase: str | None) -> tuple[Any, str | None]:
    """The private key of a PEM (or OpenSSH) text, or the problem."""
    data = text.encode("utf-8")
    password = passphrase.encode("utf-8") if passphrase else None
    if "PRIVATE KEY-----" not in text:
        return None, "is not a PEM private key"
    try:
        if _OPENSSH_PRIVATE in text:
            return serialization.load_ssh_private_key(data, password), None
        return serialization.load_pem_private_key(data, password), None
    except TypeError:
        if password is None:
            return None, "is an encrypted private key: its passphrase is needed"
        return None, "is not encrypted: leave the passphrase out"
    except UnsupportedAlgorithm:
        return None, "uses a key type that is not supported"
    except ValueError:
        if password is not None:
            return None, "does not open with the passphrase given (or is not a PEM private key)"
        return None, "is not a PEM private key (it does not parse)"


def public_key(text: str) -> tuple[Any, str | None]:
    """The public key of a PEM (``BEGIN PUBLIC KEY``) or OpenSSH (``ssh-ed25519 AAAA...``) text."""
    data = text.strip().encode("utf-8")
    try:
        if data.startswith(b"-----BEGIN"):
            return serialization.load_pem_public_key(data), None
        return serialization.load_ssh_public_key(data), None
    except (ValueError, UnsupportedAlgorithm):
        return None, "is not a PEM or OpenSSH public key"


def same_public_key(a: Any, b: Any) -> bool:
    """Whether two keys (private or public, or a certificate's) have the same public key."""
    first, second = _public_bytes(_public_of(a)), _public_bytes(_public_of(b))
    return first is not None and first == second


def _public_of(key: Any) -> Any:
    if isinstance(key, x509.Certificate):
        return key.public_key()
    if hasattr(key, "public_key"):
        return key.public_key()
    return key


def tls_problems(cert: Any, key: Any, chain: Any) -> dict[str, str]:
    """Problems of a ``tls`` secret's PEM fields, by field name (strings already checked)."""
    problems: dict[str, str] = {}
    certs = None
    if isinstance(cert, str):
        certs, problem = certificates(cert)
        if problem:
            problems["cert"] = problem
    if isinstance(key, str):
        parsed, problem = private_key(key, None)
        if problem:
            problems["key"] = problem.replace("its passphrase is needed", "a TLS key must not be encrypted")
        elif certs and not same_public_key(parsed, certs[0]):
            problems["key"] = "does not match the certificate (the first one in cert)"
    if isinstance(chain, str):
        _, problem = certificates(chain)
        if problem:
            problems["chain"] = problem
    return problems


def keypair_problems(secret_key: Any, public: Any, passphrase: Any) -> dict[str, str]:
    """Problems of a ``keypair`` secret's keys, by field name (strings already checked)."""
    problems: dict[str, str] = {}
    parsed = None
    if isinstance(secret_key, str):
        parsed, problem = private_key(secret_key, passphrase if isinstance(passphrase, str) else None)
        if problem:
            problems["secretKey"] = problem
    if isinstance(public, str):
        pub, problem = public_key(public)
        if problem:
            problems["publicKey"] = problem
        elif parsed is not None and not same_public_key(parsed, pub):
            problems["publicKey"] = "does not match secretKey"
    return problems
