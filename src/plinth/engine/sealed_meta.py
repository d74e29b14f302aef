"""Secrets of the server's own kept in the store's meta, sealed like secret values.

A meta entry named ``sealed.{name}`` holds ``{"sealed": <a sealed value>}``, sealed with the
secrets key under the associated data ``/meta/{name}`` (so a value moved to another entry does
not open). The runtime controller's spec-hash key is one (``cli/store/serve_controller.py``):
every controller of a store must use the same key, and it must never be in the clear.

They are part of the sealed values (``engine/sealed.py``): ``plinth secrets status`` counts
them, ``reseal`` seals them again with the newest key, and an export's key ids include them, so
no secrets key still sealing one is ever called unused.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from plinth.sealing import Sealer, key_id_of
from plinth.storage.base import SetMeta, Storage

PREFIX = "sealed."


def context(name: str) -> str:
    return f"/meta/{name}"


def kid_of(value: str) -> str | None:
    """The key id an entry's value was sealed with (``None``: not one of ours)."""
    try:
        doc = json.loads(value)
    except ValueError:
        return None
    return key_id_of(doc.get("sealed") or {}) if isinstance(doc, dict) else None


async def get_or_create(storage: Storage, sealer: Sealer, name: str, make: Callable[[], bytes]) -> bytes:
    """The value of ``sealed.{name}``, made with ``make`` and stored first if there is none
    (replicas racing agree: one value is stored, every one reads it back)."""
    entry = PREFIX + name
    made = json.dumps({"sealed": sealer.seal(make(), context(name))})
    await storage.commit([SetMeta(entry, made, only_if_absent=True)])
    stored = json.loads(await storage.get_meta(entry) or "{}")
    return sealer.unseal(stored.get("sealed") or {}, context(name))


async def usage(storage: Storage) -> Counter[str]:
    """How many of these values each key id sealed."""
    return Counter(kid for entry in await storage.meta_with_prefix(PREFIX) if (kid := kid_of(entry.value)))


async def reseal(storage: Storage, sealer: Sealer) -> int:
    """Seal every one not sealed with the newest key again with it; how many were.
    ``SealingError`` when one does not open."""
    count = 0
    for entry in await storage.meta_with_prefix(PREFIX):
        if kid_of(entry.value) in (None, sealer.newest_kid):
            continue
        name = entry.name.removeprefix(PREFIX)
        plaintext = sealer.unseal(json.loads(entry.value)["sealed"], context(name))
        new = json.dumps({"sealed": sealer.seal(plaintext, context(name))})
        await storage.commit([SetMeta(entry.name, new, replacing=entry.value)])
        count += 1
    return count
