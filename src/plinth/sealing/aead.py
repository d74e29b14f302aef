"""Sealing: AES-256-GCM with key ids, bound to the item a value belongs to.

A sealed value is the JSON object ``{"alg": "A256GCM", "kid": ..., "nonce": ..., "ct": ...}``:

- ``kid``: the id of the key that sealed it (``keys.key_id``), so a key ring of several keys
  knows which one opens it;
- ``nonce``: 96 random bits, fresh for every seal (base64);
- ``ct``: the ciphertext with its 128-bit tag (base64).

The associated data is ``"plinth-sealed/1\\0"`` and a *context* the caller names (the item's
link, ``/org/acme/secret/db``): a value moved to another item, or another org, does not open.
Errors never hold the plaintext, the key, or the ciphertext.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from plinth.sealing.keys import KeySource

ALG = "A256GCM"
NONCE_BYTES = 12
_AAD_PREFIX = b"plinth-sealed/1\0"


class SealingError(Exception):
    """A sealed value cannot be opened. Messages name key ids and contexts, never values."""


class UnknownKeyId(SealingError):
    def __init__(self, kid: str, where: str) -> None:
        super().__init__(f"sealed with key id {kid}, which {where} does not hold")
        self.kid = kid


class CannotUnseal(SealingError):
    pass


def _aad(context: str) -> bytes:
    return _AAD_PREFIX + context.encode("utf-8")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Sealer:
    """Seals with the newest key of its source; opens with whichever key a value names."""

    def __init__(self, source: KeySource) -> None:
        self.source = source

    @property
    def newest_kid(self) -> str:
        return self.source.ring().newest.kid

    def holds(self, kid: str) -> bool:
        return self.source.ring().find(kid) is not None or self.source.reload().find(kid) is not None

    def seal(self, plaintext: bytes, context: str) -> dict[str, str]:
        key = self.source.ring().newest
        nonce = os.urandom(NONCE_BYTES)
        ciphertext = AESGCM(key.material).encrypt(nonce, plaintext, _aad(context))
        return {"alg": ALG, "kid": key.kid, "nonce": _b64(nonce), "ct": _b64(ciphertext)}

    def unseal(self, sealed: Mapping[str, Any], context: str) -> bytes:
        kid = sealed.get("kid")
        if sealed.get("alg") != ALG or not isinstance(kid, str):
            raise CannotUnseal(f"the value sealed for {context} is not an {ALG} value with a key id")
        key = self.source.ring().find(kid) or self.source.reload().find(kid)
        if key is None:
            raise UnknownKeyId(kid, self.source.where)
        try:
            nonce = base64.b64decode(str(sealed.get("nonce", "")), validate=True)
            ciphertext = base64.b64decode(str(sealed.get("ct", "")), validate=True)
            if len(nonce) != NONCE_BYTES:
                raise ValueError("nonce length")
            return AESGCM(key.material).decrypt(nonce, ciphertext, _aad(context))
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise CannotUnseal(
                f"the value sealed for {context} with key id {kid} does not open: it was altered, "
                "or sealed for another item"
            ) from exc


def key_id_of(sealed: Mapping[str, Any]) -> str | None:
    """The key id a sealed value names (``None`` when it names none)."""
    kid = sealed.get("kid")
    return kid if isinstance(kid, str) else None
