"""The server's signing keys: Ed25519 key pairs kept in the store, so every replica verifies
every key, and rotation adds a key without invalidating what older keys signed.

Meta entries: ``signing.key.<kid>`` holds ``{kid, private, public, created}`` (PEM), and
``signing.current`` names the key that signs new tokens.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from plinth.storage.base import SetMeta, Storage

CURRENT = "signing.current"
PREFIX = "signing.key."


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: Ed25519PrivateKey
    public: Ed25519PublicKey


def _new_key() -> tuple[str, str]:
    kid = secrets.token_hex(8)
    private = Ed25519PrivateKey.generate()
    doc = {
        "kid": kid,
        "private": private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode(),
        "public": private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode(),
        "created": datetime.now(UTC).isoformat(),
    }
    return kid, orjson.dumps(doc).decode()


def _parse(raw: str) -> SigningKey:
    doc = orjson.loads(raw)
    private = serialization.load_pem_private_key(doc["private"].encode(), password=None)
    assert isinstance(private, Ed25519PrivateKey)
    return SigningKey(doc["kid"], private, private.public_key())


async def rotate(storage: Storage) -> str:
    """Add a new signing key and make it current; older keys keep verifying. Returns its kid."""
    kid, raw = _new_key()
    await storage.commit([SetMeta(PREFIX + kid, raw), SetMeta(CURRENT, kid)])
    return kid


async def ensure_signing_key(storage: Storage) -> str:
    """The current kid, creating the first key if there is none (safe when replicas race)."""
    kid = await storage.get_meta(CURRENT)
    if kid is not None:
        return kid
    new_kid, raw = _new_key()
    await storage.commit([SetMeta(PREFIX + new_kid, raw), SetMeta(CURRENT, new_kid, only_if_absent=True)])
    current = await storage.get_meta(CURRENT)
    assert current is not None
    return current


async def load_key(storage: Storage, kid: str) -> SigningKey | None:
    raw = await storage.get_meta(PREFIX + kid)
    return _parse(raw) if raw is not None else None
