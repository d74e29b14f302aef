"""Sealed fields at rest (``KindSpec.schema.sealed``): where their ciphertext lives and who opens it.

An item of a kind with sealed fields is stored as two records, written and deleted in the same
transactions:

- the item itself, **without** its sealed fields: what GET, lists, queries, events, status
  refreshes, exporters and ``plinth export`` read, so none of them can carry a value;
- its *sealed record*, under the same key with the kind ``<kind>.sealed``
  (``Key(org, "secret.sealed", "", name)``), holding ``{"kind", "name", "id", "version",
  "link", "sealed": {"alg", "kid", "nonce", "ct"}}``: the sealed fields as one JSON object,
  sealed by ``plinth.sealing`` with the item's link as associated data (a sealed record copied
  to another item or org does not open). Its ``version`` follows the item's.

The engine opens a sealed record only to merge a PATCH, to compare a write with what is stored
(a no-op stays a no-op: the values are compared in the clear, not as ciphertext with a fresh
nonce) and to answer the kind's reveal action (``engine/action_context.py``, with
:func:`read_values` and :func:`revealed`). ``reseal`` re-encrypts every sealed record with
the newest key (``plinth secrets rotate-key``); ``key_usage`` counts sealed records by key id.
The server's signing keys are sealed with the same keys (``auth/signing.py``): reseal, usage and
an export's key ids count them too, so no secrets key still sealing one is called unused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from plinth.auth import signing
from plinth.engine import sealed_meta
from plinth.engine.address import Address
from plinth.errors import ServiceUnavailable
from plinth.kinds.base import Item, KindSpec
from plinth.sealing import Sealer, SealingError, UnknownKeyId, key_id_of
from plinth.storage.base import Key, Put, Record, Storage, StorageError
from plinth.storage.query import ListRequest
from plinth.storage.scan import pages

SUFFIX = ".sealed"
#: Sealed records read (and re-sealed, in one transaction) at a time.
BATCH = 200


def record_kind(kind: str) -> str:
    return kind + SUFFIX


def sealed_key(key: Key) -> Key:
    """Where the sealed fields of the item at ``key`` are kept."""
    return Key(key.org, record_kind(key.kind), key.parent, key.name)


def public(kind: KindSpec, item: Item) -> Item:
    """``item`` without its sealed fields: the only form stored, served or handed to other items."""
    if not kind.schema.sealed:
        return item
    return {k: v for k, v in item.items() if k not in kind.schema.sealed}


def values_of(kind: KindSpec, item: Item) -> dict[str, Any]:
    return {k: item[k] for k in kind.schema.sealed if k in item}


def no_keys() -> ServiceUnavailable:
    return ServiceUnavailable("This server holds no secrets key, so it cannot store or read sealed values")


def _opening_failed(exc: SealingError, kind: str, name: str) -> Exception:
    """What a client is told when a stored value does not open: which key is missing, never a value."""
    if isinstance(exc, UnknownKeyId):
        return ServiceUnavailable(
            f"{kind.capitalize()} '{name}' is sealed with key id {exc.kid}, which this server does not hold; "
            "give the server the key file that has it",
            {"kind": kind, "name": name, "kid": exc.kid},
        )
    return exc


def seal(
    sealer: Sealer | None, kind: KindSpec, key: Key, href: str, item_id: str, version: int, values: Item
) -> Record:
    """The sealed record of ``values``, the sealed fields of the item at ``key``."""
    if sealer is None:
        raise no_keys()
    plaintext = orjson.dumps(values)
    doc = {
        "kind": record_kind(kind.name),
        "name": key.name,
        "id": f"{item_id}{SUFFIX}",
        "version": version,
        "link": href,
        "sealed": sealer.seal(plaintext, href),
    }
    return Record(sealed_key(key), f"{item_id}{SUFFIX}", version, orjson.dumps(doc))


def open_record(sealer: Sealer | None, record: Record, kind: str, name: str, href: str) -> dict[str, Any]:
    """The sealed fields a sealed record holds, in the clear."""
    if sealer is None:
        raise no_keys()
    doc = orjson.loads(record.doc)
    try:
        values = orjson.loads(sealer.unseal(doc.get("sealed") or {}, href))
    except SealingError as exc:
        raise _opening_failed(exc, kind, name) from exc
    if not isinstance(values, dict):
        raise ValueError(f"the sealed record of {href} holds no object")
    return values


async def read_values(
    storage: Storage, sealer: Sealer | None, kind: KindSpec, key: Key, href: str, *, fresh: bool
) -> tuple[Record | None, dict[str, Any]]:
    """The sealed record of the item at ``key`` and its fields in the clear (``{}`` when none)."""
    record = await storage.get(sealed_key(key), fresh=fresh)
    if record is None:
        return None, {}
    return record, open_record(sealer, record, kind.name, key.name, href)


def revealed(doc: bytes, values: Mapping[str, Any]) -> bytes:
    """The served item with its sealed fields put back, before ``spec`` and ``status``."""
    item = orjson.loads(doc)
    out: Item = {}
    for key, value in item.items():
        if key in ("spec", "status"):
            out.update(values)
            values = {}
        out[key] = value
    out.update(values)
    return orjson.dumps(out)


# -- operator commands: rotation and key usage ------------------------------------------------


def sealed_kinds(kinds: Mapping[str, KindSpec]) -> list[KindSpec]:
    return [kind for kind in kinds.values() if kind.schema.sealed]


async def _orgs(storage: Storage) -> AsyncIterator[str]:
    async for page in pages(storage, ListRequest("", "org", "", limit=BATCH)):
        for record in page:
            yield record.key.name


async def sealed_pages(storage: Storage, kinds: Mapping[str, KindSpec]) -> AsyncIterator[list[Record]]:
    """Every sealed record of the store, a page at a time."""
    async for org in _orgs(storage):
        for kind in sealed_kinds(kinds):
            async for page in pages(storage, ListRequest(org, record_kind(kind.name), None, limit=BATCH)):
                yield page


async def key_usage(storage: Storage, kinds: Mapping[str, KindSpec]) -> Counter[str]:
    """How many sealed records each key id sealed (``"?"``: a record naming no key id), the
    server's own sealed meta values included (``engine/sealed_meta.py``)."""
    usage: Counter[str] = await sealed_meta.usage(storage)
    async for page in sealed_pages(storage, kinds):
        for record in page:
            usage[key_id_of(orjson.loads(record.doc).get("sealed") or {}) or "?"] += 1
    return usage


async def signing_key_usage(storage: Storage) -> Counter[str]:
    """How many of the server's signing keys each key id sealed (``auth/signing.py``)."""
    return await signing.key_usage(storage)


def key_ids_in_export(lines: Iterable[bytes]) -> set[str]:
    """The key ids the sealed records of an export file (``storage/transfer.py``) were sealed with."""
    kids: set[str] = set()
    for line in lines:
        if SUFFIX.encode() in line:
            obj = orjson.loads(line)
            if obj.get("type") == "record" and str(obj.get("kind", "")).endswith(SUFFIX):
                kids.add(key_id_of((obj.get("doc") or {}).get("sealed") or {}) or "?")
        elif sealed_meta.PREFIX.encode() in line:
            obj = orjson.loads(line)
            if obj.get("type") == "meta" and str(obj.get("name", "")).startswith(sealed_meta.PREFIX):
                kids.add(sealed_meta.kid_of(str(obj.get("value", ""))) or "?")
        elif signing.PREFIX.encode() in line:
            obj = orjson.loads(line)
            if obj.get("type") == "meta" and str(obj.get("name", "")).startswith(signing.PREFIX):
                kid = signing.sealed_kid(str(obj.get("value", "")))
                if kid is not None and kid != "clear":
                    kids.add(kid)
    return kids


def _item_href(kinds: Mapping[str, KindSpec], key: Key) -> str:
    kind = kinds[key.kind.removesuffix(SUFFIX)]
    return Address.stored(kind, key).href


def _resealed(sealer: Sealer, kinds: Mapping[str, KindSpec], record: Record) -> Record | None:
    """``record`` sealed again with the newest key; ``None`` when it already is."""
    doc = orjson.loads(record.doc)
    if key_id_of(doc.get("sealed") or {}) == sealer.newest_kid:
        return None
    href = _item_href(kinds, record.key)
    plaintext = sealer.unseal(doc.get("sealed") or {}, href)
    doc["sealed"] = sealer.seal(plaintext, href)
    return Record(record.key, record.id, record.version, orjson.dumps(doc))


@dataclass
class ResealReport:
    resealed: int = 0
    already: int = 0
    #: The server's signing keys sealed again (``auth/signing.py``), apart from the values.
    signing_keys: int = 0


async def reseal(storage: Storage, kinds: Mapping[str, KindSpec], sealer: Sealer) -> ResealReport:
    """Seal every sealed record not sealed with the newest key again with it, a page per
    transaction, keeping each record's version. A record a server rewrote meanwhile (its version
    moved) is read again; one it rewrote is sealed with the newest key already, or is next time.
    A value that does not open stops the run (``SealingError``) with the pages before it done."""
    report = ResealReport()
    report.signing_keys, _ = await signing.reseal(storage, sealer)
    report.resealed += await sealed_meta.reseal(storage, sealer)
    async for page in sealed_pages(storage, kinds):
        puts: list[Put] = []
        for record in page:
            new = _resealed(sealer, kinds, record)
            if new is None:
                report.already += 1
            else:
                puts.append(Put(new, record.version, watched=False))
        if not puts:
            continue
        try:
            await storage.commit(puts)
            report.resealed += len(puts)
        except StorageError as exc:
            if exc.code != "conflict" and exc.code != "not_found":
                raise
            report.resealed += await _reseal_one_by_one(storage, kinds, sealer, [p.record.key for p in puts])
    return report


async def _reseal_one_by_one(storage: Storage, kinds: Mapping[str, KindSpec], sealer: Sealer, keys: list[Key]) -> int:
    done = 0
    for key in keys:
        for _ in range(10):
            record = await storage.get(key, fresh=True)
            new = _resealed(sealer, kinds, record) if record is not None else None
            if record is None or new is None:
                break
            try:
                await storage.commit([Put(new, record.version, watched=False)])
                done += 1
                break
            except StorageError as exc:
                if exc.code not in ("conflict", "not_found"):
                    raise
    return done
