"""The server's signing keys: Ed25519 key pairs kept in the store, so every replica verifies
every key, and rotation adds a key without invalidating what older keys signed.

Meta entries: ``signing.key.<kid>`` holds ``{kid, public, created, sealed}`` and
``signing.current`` names the key that signs new tokens. The public key (PEM) is in the clear:
verifying a service account key needs nothing else. The private key is **sealed** with the
secrets key like a secret's values (``plinth.sealing``; the associated data names the signing
key, so a sealed key moved to another entry does not open): a copy of the store, a backup or a
``pg_dump`` without the secrets key cannot sign a key any server accepts.

Stores from before sealing hold ``private`` (PEM) in the clear: :func:`seal_clear_keys` seals
them in place at every start, and until then they are read as they are.
"""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from plinth.sealing import Sealer, SealingError, UnknownKeyId, key_id_of
from plinth.storage.base import SetMeta, Storage

CURRENT = "signing.current"
PREFIX = "signing.key."


class SigningKeyError(Exception):
    """A signing key cannot be used: no secrets key, or not the one that sealed it. The message
    says which key ids are involved and what to give the server, never key material."""


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: Ed25519PrivateKey
    public: Ed25519PublicKey


def context(kid: str) -> str:
    """The associated data a signing key is sealed with: it opens only as this entry."""
    return f"/signing-key/{kid}"


def _private_pem(private: Ed25519PrivateKey) -> bytes:
    return private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _new_key(sealer: Sealer | None) -> tuple[str, str]:
    if sealer is None:
        raise SigningKeyError("no secrets key to seal a signing key with: give the server its secrets key")
    kid = secrets.token_hex(8)
    private = Ed25519PrivateKey.generate()
    doc = {
        "kid": kid,
        "public": private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode(),
        "created": datetime.now(UTC).isoformat(),
        "sealed": sealer.seal(_private_pem(private), context(kid)),
    }
    return kid, orjson.dumps(doc).decode()


def _cannot_open(kid: str, exc: SealingError | None) -> SigningKeyError:
    if isinstance(exc, UnknownKeyId):
        why = f"it is sealed with secrets key id {exc.kid}, which the server's keys do not hold"
    elif exc is None:
        why = "the server has no secrets key"
    else:
        why = "it does not open with the server's secrets keys (altered, or sealed for another entry)"
    return SigningKeyError(
        f"cannot open signing key {kid}: {why}. Start the server with the secrets key this store was sealed "
        "with (its secrets.key, --secrets-key-file or PLINTH_SECRETS_KEY); a copy of a store without it cannot sign"
    )


def _parse(raw: str, sealer: Sealer | None) -> SigningKey:
    doc = orjson.loads(raw)
    kid = str(doc["kid"])
    if "private" in doc:  # a store from before sealing, not started since
        pem = doc["private"].encode()
    else:
        if sealer is None:
            raise _cannot_open(kid, None)
        try:
            pem = sealer.unseal(doc.get("sealed") or {}, context(kid))
        except SealingError as exc:
            raise _cannot_open(kid, exc) from exc
    private = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(private, Ed25519PrivateKey)
    return SigningKey(kid, private, private.public_key())


def _public(raw: str) -> Ed25519PublicKey:
    public = serialization.load_pem_public_key(orjson.loads(raw)["public"].encode())
    assert isinstance(public, Ed25519PublicKey)
    return public


async def rotate(storage: Storage, sealer: Sealer | None) -> str:
    """Add a new signing key and make it current; older keys keep verifying. Returns its kid."""
    kid, raw = _new_key(sealer)
    await storage.commit([SetMeta(PREFIX + kid, raw), SetMeta(CURRENT, kid)])
    return kid


async def ensure_signing_key(storage: Storage, sealer: Sealer | None) -> str:
    """The current kid, creating the first key if there is none (safe when replicas race)."""
    kid = await storage.get_meta(CURRENT)
    if kid is not None:
        return kid
    new_kid, raw = _new_key(sealer)
    await storage.commit([SetMeta(PREFIX + new_kid, raw), SetMeta(CURRENT, new_kid, only_if_absent=True)])
    current = await storage.get_meta(CURRENT)
    assert current is not None
    return current


async def load_key(storage: Storage, sealer: Sealer | None, kid: str) -> SigningKey | None:
    """The key pair ``kid`` (``None`` when the store has none); :class:`SigningKeyError` when its
    private key does not open with ``sealer``."""
    raw = await storage.get_meta(PREFIX + kid)
    return _parse(raw, sealer) if raw is not None else None


async def load_public(storage: Storage, kid: str) -> Ed25519PublicKey | None:
    """The public key ``kid``, to verify with (no secrets key needed), or ``None``."""
    raw = await storage.get_meta(PREFIX + kid)
    return _public(raw) if raw is not None else None


async def check_current(storage: Storage, sealer: Sealer | None) -> None:
    """Raise :class:`SigningKeyError` unless the current signing key (if any) opens: a server
    that could not sign says so when it starts, not at its first ``-addKey``."""
    kid = await storage.get_meta(CURRENT)
    if kid is not None:
        await load_key(storage, sealer, kid)


async def seal_clear_keys(storage: Storage, sealer: Sealer | None) -> int:
    """Seal in place every signing key a store from before sealing holds in the clear; how many.

    Each entry is replaced only if it is still the clear one (compare-and-set), so replicas
    starting together seal each key once. Without a sealer nothing is done."""
    if sealer is None:
        return 0
    sealed = 0
    for entry in await storage.meta_with_prefix(PREFIX):
        doc = orjson.loads(entry.value)
        if "private" not in doc:
            continue
        kid = str(doc["kid"])
        new = {k: v for k, v in doc.items() if k != "private"}
        new["sealed"] = sealer.seal(doc["private"].encode(), context(kid))
        await storage.commit([SetMeta(entry.name, orjson.dumps(new).decode(), replacing=entry.value)])
        sealed += 1
    return sealed


def sealed_kid(raw: str) -> str | None:
    """The secrets key id a signing key entry is sealed with (``"clear"`` for one from before
    sealing; ``None`` for a value that is no signing key)."""
    try:
        doc: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict):
        return None
    if "private" in doc:
        return "clear"
    return key_id_of(doc.get("sealed") or {}) or "?"


async def key_usage(storage: Storage) -> Counter[str]:
    """How many signing keys each secrets key id sealed."""
    usage: Counter[str] = Counter()
    for entry in await storage.meta_with_prefix(PREFIX):
        kid = sealed_kid(entry.value)
        if kid is not None and kid != "clear":
            usage[kid] += 1
    return usage


async def reseal(storage: Storage, sealer: Sealer) -> tuple[int, int]:
    """Seal every signing key not sealed with the newest secrets key again with it (clear ones
    included); ``(resealed, already)``. ``SealingError`` when one does not open."""
    resealed = already = 0
    for entry in await storage.meta_with_prefix(PREFIX):
        doc = orjson.loads(entry.value)
        kid = str(doc["kid"])
        if "private" not in doc and key_id_of(doc.get("sealed") or {}) == sealer.newest_kid:
            already += 1
            continue
        pem = doc["private"].encode() if "private" in doc else sealer.unseal(doc.get("sealed") or {}, context(kid))
        new = {k: v for k, v in doc.items() if k != "private"}
        new["sealed"] = sealer.seal(pem, context(kid))
        await storage.commit([SetMeta(entry.name, orjson.dumps(new).decode(), replacing=entry.value)])
        resealed += 1
    return resealed, already
