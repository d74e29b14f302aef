"""Secrets at rest: one sealing component for every field a kind declares sealed.

``aead`` seals and opens values (AES-256-GCM, a fresh nonce per value, the key id beside the
ciphertext, the item's link as associated data); ``keys`` says where keys come from (a key
file, ``PLINTH_SECRETS_KEY``, or a SQLite store's generated ``secrets.key``) and how they are
named. The engine seals a kind's ``KindSpec.schema.sealed`` fields before a record is stored and opens
them only to compare, merge, and answer ``-reveal`` (``engine/sealed.py``).

A layer of its own at the bottom: it imports nothing of Plinth (checked by ``lint-imports``).
"""

from plinth.sealing.aead import CannotUnseal, Sealer, SealingError, UnknownKeyId, key_id_of
from plinth.sealing.keys import (
    FileKeys,
    Key,
    KeyConfigError,
    KeyRing,
    KeySource,
    OpenedKeys,
    StaticKeys,
    generate_key,
    open_keys,
)

__all__ = [
    "CannotUnseal",
    "FileKeys",
    "Key",
    "KeyConfigError",
    "KeyRing",
    "KeySource",
    "OpenedKeys",
    "Sealer",
    "SealingError",
    "StaticKeys",
    "UnknownKeyId",
    "generate_key",
    "key_id_of",
    "open_keys",
]
