"""The export file: a whole store as JSON lines, the same whichever backend wrote or reads it.

The first line is a header, ``{"type": "header", "format": "plinth-export", "version": 1,
"counts": {"record": n, "ref": n, "event": n, "meta": n}}``; every other line is one row with
every column, its document (if it has one) as JSON::

    {"type": "record", "org": o, "kind": k, "parent": p, "name": n, "id": i, "version": 3, "doc": {...}}
    {"type": "ref", "org": o, "kind": k, "parent": p, "name": n, "target": "/org/o/..."}
    {"type": "event", "seq": 7, "org": o, "kind": k, "parent": p, "name": n, "id": i, "created": t, "doc": {...}}
    {"type": "meta", "name": ..., "value": ...}

Meta entries include the signing keys, so keys minted before the move still verify after it.
Only :meth:`Storage.dump` and :meth:`Storage.load` touch the store: this module never sees SQL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import IO, Any

import orjson

from plinth.storage.base import DumpCounts, Key, MetaEntry, Record, Ref, Row, Storage, StoredEvent

FORMAT = "plinth-export"
FORMAT_VERSION = 1
#: Rows loaded per transaction by :func:`import_store`.
BATCH_ROWS = 500
_KEY_FIELDS = ("org", "kind", "parent", "name")


class TransferError(Exception):
    """The file is not a Plinth export this version reads, or the store cannot take it."""


def header(counts: DumpCounts) -> dict[str, Any]:
    by_type = {"record": counts.records, "ref": counts.refs, "event": counts.events, "meta": counts.meta}
    return {"type": "header", "format": FORMAT, "version": FORMAT_VERSION, "counts": by_type}


def encode(row: Row) -> dict[str, Any]:
    """The JSON object of one row (documents parsed, so the file is plain JSON lines)."""
    if isinstance(row, MetaEntry):
        return {"type": "meta", "name": row.name, "value": row.value}
    key = {"org": row.key.org, "kind": row.key.kind, "parent": row.key.parent, "name": row.key.name}
    if isinstance(row, Record):
        return {"type": "record", **key, "id": row.id, "version": row.version, "doc": orjson.loads(row.doc)}
    if isinstance(row, Ref):
        return {"type": "ref", **key, "target": row.target}
    doc = orjson.loads(row.doc)
    return {"type": "event", "seq": row.seq, **key, "id": row.id, "created": row.created, "doc": doc}


def decode(obj: Any) -> Row:
    """The row an :func:`encode` object stands for; raises :class:`TransferError` if malformed."""
    try:
        kind = obj["type"]
        if kind == "meta":
            return MetaEntry(_str(obj["name"]), _str(obj["value"]))
        key = Key(*(_str(obj[f]) for f in _KEY_FIELDS))
        if kind == "record":
            return Record(key, _str(obj["id"]), _int(obj["version"]), _doc(obj["doc"]))
        if kind == "ref":
            return Ref(key, _str(obj["target"]))
        if kind == "event":
            return StoredEvent(_int(obj["seq"]), key, _str(obj["id"]), _str(obj["created"]), _doc(obj["doc"]))
    except (KeyError, TypeError) as exc:
        raise TransferError(f"malformed row: {exc}") from exc
    raise TransferError(f"unknown row type {kind!r}")


async def export_store(storage: Storage) -> AsyncIterator[bytes]:
    """The export of ``storage``, one line (ending in a newline) at a time, header first."""
    async for item in storage.dump():
        obj = header(item) if isinstance(item, DumpCounts) else encode(item)
        yield orjson.dumps(obj) + b"\n"


def check_export(lines: Iterable[bytes]) -> DumpCounts:
    """Read a whole export and return its counts; raises :class:`TransferError` unless the
    header is one this version reads and the rows are well-formed and as many as it says."""
    iterator = iter(lines)
    counts = read_header(next(iterator, b""))
    seen: Counter[str] = Counter()
    for number, line in enumerate(iterator, start=2):
        try:
            row = decode(_parse(line))
        except TransferError as exc:
            raise TransferError(f"line {number}: {exc}") from exc
        seen[_type_name(row)] += 1
    found = DumpCounts(seen["record"], seen["ref"], seen["event"], seen["meta"])
    if found != counts:
        raise TransferError(f"the header promises {counts} but the file holds {found}: is it truncated?")
    return counts


async def import_store(
    storage: Storage, read: Callable[[], Iterable[bytes]], batch_rows: int = BATCH_ROWS
) -> DumpCounts:
    """Load an export (already checked by :func:`check_export`) into ``storage``, which must be
    empty, ``batch_rows`` rows per transaction; ``read()`` gives the file's lines from the start.

    Two passes, so memory does not grow with the store: the meta entries first (a server
    started on the store mid-import finds it claimed rather than bootstrapping a second org),
    then every other row in file order.
    """
    if not await storage.is_empty():
        raise TransferError("the target store is not empty: import only into a new, empty store")
    counts = read_header(next(iter(read()), b""))
    for wanted_meta in (True, False):
        batch: list[Row] = []
        for row in _rows(read()):
            if isinstance(row, MetaEntry) != wanted_meta:
                continue
            batch.append(row)
            if len(batch) >= batch_rows:
                await storage.load(batch)
                batch = []
        if batch:
            await storage.load(batch)
    return counts


def _rows(lines: Iterable[bytes]) -> Iterator[Row]:
    iterator = iter(lines)
    next(iterator, None)  # the header
    return (decode(_parse(line)) for line in iterator)


def read_header(line: bytes) -> DumpCounts:
    """The counts an export's first line promises; :class:`TransferError` if it is no header."""
    obj = _parse(line) if line.strip() else None
    if not isinstance(obj, dict) or obj.get("type") != "header" or obj.get("format") != FORMAT:
        raise TransferError(f"not a Plinth export: the first line is not a {FORMAT} header")
    if obj.get("version") != FORMAT_VERSION:
        raise TransferError(f"export format version {obj.get('version')!r}; this Plinth reads {FORMAT_VERSION}")
    try:
        c = obj["counts"]
        return DumpCounts(_int(c["record"]), _int(c["ref"]), _int(c["event"]), _int(c["meta"]))
    except (KeyError, TypeError) as exc:
        raise TransferError(f"malformed header counts: {exc}") from exc


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise TransferError(f"not JSON: {exc}") from exc


def _type_name(row: Row) -> str:
    return {Record: "record", Ref: "ref", StoredEvent: "event", MetaEntry: "meta"}[type(row)]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _doc(value: Any) -> bytes:
    if not isinstance(value, dict):
        raise TypeError("expected a JSON object document")
    return orjson.dumps(value)


def iter_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """The non-blank lines of ``stream``, from the start."""
    stream.seek(0)
    return (line for line in stream if line.strip())
