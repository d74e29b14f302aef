"""Small builders and readers the storage conformance suite shares."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Sequence
from typing import Any

import orjson
import pytest

from plinth.storage.base import AppendEvent, EventRecord, Key, Put, Record, Storage, StorageError
from plinth.storage.evaluate import sort_value
from plinth.storage.query import ListRequest, PageStart

KIND = "thing"


def new_org() -> str:
    """A fresh org per check, so checks never see each other's records in a shared store."""
    return f"org-{uuid.uuid4().hex[:12]}"


def make_record(
    org: str, name: str, doc: dict[str, Any] | None = None, *, kind: str = KIND, parent: str = "", version: int = 1
) -> Record:
    body = {"name": name, "version": version, **(doc or {})}
    return Record(Key(org, kind, parent, name), uuid.uuid4().hex, version, orjson.dumps(body))


def next_version(record: Record, doc: dict[str, Any] | None = None) -> Record:
    """The record as an update would store it: same key and id, version + 1, new body."""
    version = record.version + 1
    body = {"name": record.key.name, "version": version, **(doc or {})}
    return dataclasses.replace(record, version=version, doc=orjson.dumps(body))


def make_event(key: Key, what: str) -> AppendEvent:
    doc = {"what": what, "name": key.name}
    return AppendEvent(key, uuid.uuid4().hex, "2025-01-01T00:00:00Z", orjson.dumps(doc))


def whats(events: Sequence[EventRecord]) -> list[str]:
    """What each event says happened (``make_event``'s ``what``), in the order given."""
    return [orjson.loads(event.doc)["what"] for event in events]


def body(record: Record) -> Any:
    return orjson.loads(record.doc)


def assert_same(got: Record | None, want: Record) -> None:
    """Equal as stored: backends may re-serialize the JSON, so bodies compare parsed."""
    assert got is not None, f"{want.key} is missing"
    assert (got.key, got.id, got.version) == (want.key, want.id, want.version)
    assert body(got) == body(want)


async def expect_error(code: str, pending: Awaitable[object]) -> StorageError:
    with pytest.raises(StorageError) as caught:
        await pending
    assert caught.value.code == code, f"expected {code!r}, got {caught.value.code!r}: {caught.value}"
    return caught.value


async def create(store: Storage, records: Sequence[Record]) -> None:
    await store.commit([Put(record, None) for record in records])


def names(records: Sequence[Record]) -> list[str]:
    return [record.key.name for record in records]


async def list_all(store: Storage, request: ListRequest) -> list[Record]:
    """Every record the request selects, fetched page by page as the engine will page."""
    found: list[Record] = []
    start = None
    while True:
        page = await store.list_page(dataclasses.replace(request, start=start))
        assert len(page) <= request.limit
        found.extend(page)
        if len(page) < request.limit:
            return found
        last = page[-1]
        sort = request.filter.sort
        value = sort_value(body(last), sort.path) if sort is not None else None
        start = PageStart(last.key.parent, last.key.name, value)
