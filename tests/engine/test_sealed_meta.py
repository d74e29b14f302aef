"""The server's own sealed meta values (``engine/sealed_meta.py``): made once and read back the
same, never in the clear, and counted, resealed and exported with the sealed values."""

from __future__ import annotations

import base64

from plinth.engine import sealed_meta
from plinth.engine.sealed import key_ids_in_export, key_usage, reseal
from plinth.kinds import REGISTRY
from plinth.sealing import KeyRing, Sealer, StaticKeys, generate_key
from plinth.storage.base import Storage
from plinth.storage.transfer import export_store
from tests.aio import RunAsync


def test_made_once_sealed_counted_resealed_and_exported(sqlite_store: Storage, run_async: RunAsync) -> None:
    old, new = generate_key(), generate_key()
    first = Sealer(StaticKeys(KeyRing((old,))))
    value = run_async(sealed_meta.get_or_create(sqlite_store, first, "test.key", lambda: b"v" * 32))
    again = run_async(sealed_meta.get_or_create(sqlite_store, first, "test.key", lambda: b"other"))
    assert value == again == b"v" * 32  # the first one stays
    stored = run_async(sqlite_store.get_meta(sealed_meta.PREFIX + "test.key")) or ""
    # Sealed, never in the clear: neither the value nor its base64 (the whole of either: four
    # letters of it turn up by chance in a random nonce or ciphertext, about once in 150,000 runs).
    assert "v" * 32 not in stored and base64.b64encode(b"v" * 32).decode() not in stored
    assert sealed_meta.kid_of(stored) == old.kid
    assert run_async(key_usage(sqlite_store, REGISTRY))[old.kid] == 1

    rotated = Sealer(StaticKeys(KeyRing((old, new))))  # the last key seals
    assert run_async(reseal(sqlite_store, REGISTRY, rotated)).resealed == 1
    usage = run_async(key_usage(sqlite_store, REGISTRY))
    assert usage[new.kid] == 1 and not usage.get(old.kid)
    only_new = Sealer(StaticKeys(KeyRing((new,))))
    assert run_async(sealed_meta.get_or_create(sqlite_store, only_new, "test.key", lambda: b"x")) == value

    async def lines() -> list[bytes]:
        return [line async for line in export_store(sqlite_store)]

    assert new.kid in key_ids_in_export(run_async(lines()))
