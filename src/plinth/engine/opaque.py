"""Opaque tokens the server hands out and takes back: paging cursors and watch versions.

Both would otherwise show what a caller may not see: a cursor the name and sort value of the
last row scanned (perhaps a hidden one), a watch version the store-wide change counter (every
tenant's write count). So both are sealed with one 256-bit key that every worker and replica
shares, because it lives in the store: the ``meta`` setting ``token.key`` (base64), made by the
first process that needs it (``SetMeta(only_if_absent=True)``, then read back, so racing
replicas agree), and kept in memory per process once read.

- **Cursors** are AES-256-GCM over their JSON, a fresh 96-bit nonce each, with the collection's
  link as associated data: a cursor is opaque, a changed one or one presented to another
  collection does not open (the caller answers 400).
- **Watch versions** are one AES block over the 8-byte change seq and 8 zero bytes (a pseudo-
  random permutation; the zeros authenticate: a forged version opens to them with chance
  2^-64). Deterministic, so the same version always reads the same, and short (22 characters).

The key protects only what tokens carry (names, sort values and positions of rows of the same
store): someone who holds the store already holds all of that, so it is kept as the signing
keys are kept, not sealed with the secrets key.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import weakref
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from plinth.storage.base import SetMeta, Storage

META_NAME = "token.key"
KEY_BYTES = 32
NONCE_BYTES = 12
_CURSOR_AAD = b"plinth-cursor/1\0"
_SEQ_CHECK = bytes(8)
#: Characters of a sealed watch version: base64url of one 16-byte block, unpadded.
SEQ_TOKEN_LENGTH = 22

_keys: weakref.WeakKeyDictionary[Any, bytes] = weakref.WeakKeyDictionary()


async def token_key(storage: Storage) -> bytes:
    """The store's token key, made on first use (safe when workers and replicas race)."""
    key = _keys.get(storage)
    if key is not None:
        return key
    raw = await storage.get_meta(META_NAME)
    if raw is None:
        fresh = base64.b64encode(os.urandom(KEY_BYTES)).decode("ascii")
        await storage.commit([SetMeta(META_NAME, fresh, only_if_absent=True)])
        raw = await storage.get_meta(META_NAME)
        assert raw is not None
    key = base64.b64decode(raw)
    _keys[storage] = key
    return key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(token: str) -> bytes | None:
    if not token.isascii() or len(token) > 16384:
        return None
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None


def seal_cursor(key: bytes, payload: bytes, context: str) -> str:
    """``payload`` sealed for the collection at ``context``."""
    nonce = os.urandom(NONCE_BYTES)
    return _b64(nonce + AESGCM(key).encrypt(nonce, payload, _CURSOR_AAD + context.encode()))


def open_cursor(key: bytes, token: str, context: str) -> bytes | None:
    """The payload of a cursor sealed for ``context``; ``None`` when it is not one."""
    raw = _unb64(token)
    if raw is None or len(raw) < NONCE_BYTES + 16:
        return None
    try:
        return AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], _CURSOR_AAD + context.encode())
    except InvalidTag:
        return None


@functools.lru_cache(maxsize=8)
def _blocks(key: bytes) -> Any:
    """One AES block cipher per key: ECB over whole blocks keeps no state between calls, so the
    same encryptor and decryptor serve every version (a watch seals one per change)."""
    cipher = Cipher(algorithms.AES(key), modes.ECB())
    return cipher.encryptor(), cipher.decryptor()


def seal_seq(key: bytes, seq: int) -> str:
    """A change seq (0 ≤ seq < 2^63) as an opaque watch version."""
    return _b64(_blocks(key)[0].update(seq.to_bytes(8, "big") + _SEQ_CHECK))


def open_seq(key: bytes, token: str) -> int | None:
    """The change seq of a watch version; ``None`` when it is not one this store made."""
    raw = _unb64(token)
    if raw is None or len(raw) != 16:
        return None
    block = _blocks(key)[1].update(raw)
    if block[8:] != _SEQ_CHECK:
        return None
    seq = int.from_bytes(block[:8], "big")
    return seq if seq < 2**63 else None
