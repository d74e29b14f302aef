"""Where what a runtime controller reported of an item is kept, and how it is read.

One record per item whose status ``ReadsRuntime``, ``Key(org, "<kind>.observed", parent,
name)`` beside the item (as its sealed values are), never watched: it reaches clients only
through the item's status and its deployments. It is written by ``observations.py`` and
deleted with the item (``deletes.py``).
"""

from __future__ import annotations

from typing import Any

import orjson

from plinth.storage.base import Key, Record, Storage

SUFFIX = ".observed"


def observed_key(item_key: Key) -> Key:
    """The observation record of the item stored at ``item_key``."""
    return Key(item_key.org, item_key.kind + SUFFIX, item_key.parent, item_key.name)


async def read_observed(storage: Storage, item_key: Key, fresh: bool = False) -> tuple[Record | None, Any]:
    """The stored observation record and its document (``None`` when nothing was reported)."""
    record = await storage.get(observed_key(item_key), fresh=fresh)
    return record, (orjson.loads(record.doc) if record is not None else None)
