"""The PostgreSQL record cache: coherent across processes through NOTIFY, never trusted by writes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from plinth.storage.base import Delete, Key, Put, Record
from plinth.storage.postgres import PostgresStorage
from plinth.storage.record_cache import ABSENT, EVERYTHING, RecordCache, payload_for
from tests.aio import RunAsync

KEY = Key("acme", "gvc", "", "cached")


def _record(version: int, doc: bytes = b"{}") -> Record:
    return Record(KEY, "id-1", version, doc)


def test_entries_expire_and_evict() -> None:
    cache = RecordCache(ttl=0.05)
    cache.put(_record(1), cache.ticket(KEY))
    assert cache.get(KEY) == _record(1)
    time.sleep(0.1)
    assert cache.get(KEY) is None
    cache.put(_record(2), cache.ticket(KEY))
    cache.on_notification(payload_for([KEY]))
    assert cache.get(KEY) is None


def test_a_lost_listener_or_an_oversized_payload_clears_everything() -> None:
    cache = RecordCache()
    cache.put(_record(1), cache.ticket(KEY))
    cache.on_notification(None)
    assert cache.get(KEY) is None
    many = [Key("acme", "gvc", "", f"name-{i:05d}") for i in range(2000)]
    assert payload_for(many) == EVERYTHING
    cache.put(_record(1), cache.ticket(KEY))
    cache.on_notification(EVERYTHING)
    assert cache.get(KEY) is None


@pytest.mark.postgres
def test_a_write_through_one_store_reaches_the_others_cache(run_async: RunAsync, fresh_pg_url: str) -> None:
    async def scenario() -> tuple[int, int, float, Record | None]:
        writer = await PostgresStorage.open(fresh_pg_url)
        reader = await PostgresStorage.open(fresh_pg_url)
        try:
            await writer.commit([Put(_record(1, b'{"v": 1}'), None)])
            first = await reader.get(KEY)  # now cached by the reader
            assert first is not None
            await writer.commit([Put(_record(2, b'{"v": 2}'), 1)])
            own = await writer.get(KEY)  # the writer sees its own write at once
            assert own is not None
            started = time.monotonic()
            seen = first
            while seen is not None and seen.version != 2 and time.monotonic() - started < 3:
                await asyncio.sleep(0.01)
                seen = await reader.get(KEY)
            delay = time.monotonic() - started
            await writer.commit([Delete(KEY, 2)])
            gone = await reader.get(KEY)
            deadline = time.monotonic() + 3
            while gone is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
                gone = await reader.get(KEY)
            return own.version, seen.version if seen else -1, delay, gone
        finally:
            await writer.close()
            await reader.close()

    own, seen, delay, gone = run_async(scenario())
    assert own == 2 and seen == 2
    assert delay < 1.0  # the documented bound for replicas (well under it in practice)
    assert gone is None


def test_a_missing_key_is_cached_unless_an_eviction_overtook_the_read() -> None:
    cache = RecordCache()
    ticket = cache.ticket(KEY)
    cache.put_absent(KEY, ticket)
    assert cache.get(KEY) is ABSENT
    cache.on_notification(payload_for([KEY]))  # created elsewhere
    assert cache.get(KEY) is None
    ticket = cache.ticket(KEY)
    cache.evict([KEY])  # a commit of the key finished while the read was under way
    cache.put_absent(KEY, ticket)
    assert cache.get(KEY) is None
    ticket = cache.ticket(KEY)
    cache.on_notification(None)  # the listener lost: everything dropped meanwhile
    cache.put_absent(KEY, ticket)
    assert cache.get(KEY) is None


def test_a_record_read_is_cached_unless_an_eviction_overtook_the_read() -> None:
    cache = RecordCache()
    ticket = cache.ticket(KEY)
    cache.on_notification(payload_for([KEY]))  # version 2 committed elsewhere after the SELECT
    cache.put(_record(1), ticket)
    assert cache.get(KEY) is None  # the next read goes to the database, and sees version 2
    ticket = cache.ticket(KEY)
    cache.on_notification(EVERYTHING)
    cache.put(_record(1), ticket)
    assert cache.get(KEY) is None
    ticket = cache.ticket(KEY)
    cache.evict([Key("acme", "gvc", "", "another")])  # another key's eviction, in another bucket
    cache.put(_record(1), ticket)
    assert cache.get(KEY) == _record(1)


@pytest.mark.postgres
def test_a_write_notified_while_another_store_reads_is_not_hidden_by_that_read(
    run_async: RunAsync, fresh_pg_url: str
) -> None:
    """The reader's SELECT answers version 1; version 2 commits and its notification reaches the
    reader before the SELECT's answer is cached: the reader's next read must see version 2."""

    async def scenario() -> tuple[int, int]:
        writer = await PostgresStorage.open(fresh_pg_url)
        reader = await PostgresStorage.open(fresh_pg_url)
        try:
            await writer.commit([Put(_record(1, b'{"v": 1}'), None)])
            await _until(lambda: reader._cache.get(KEY) is None)  # the create's notification is in
            select = reader._fetch

            async def select_then_let_a_write_overtake(*args: Any) -> list[tuple[Any, ...]]:
                rows = await select(*args)
                ticket = reader._cache.ticket(KEY)
                await writer.commit([Put(_record(2, b'{"v": 2}'), 1)])
                await _until(lambda: reader._cache.ticket(KEY) != ticket)  # notified
                return rows

            reader._fetch = select_then_let_a_write_overtake  # type: ignore[method-assign]
            overtaken = await reader.get(KEY)
            reader._fetch = select  # type: ignore[method-assign]
            after = await reader.get(KEY)
            assert overtaken is not None and after is not None
            return overtaken.version, after.version
        finally:
            await writer.close()
            await reader.close()

    assert run_async(scenario()) == (1, 2)


async def _until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the notification did not arrive"
        await asyncio.sleep(0.005)


@pytest.mark.postgres
def test_a_key_read_as_missing_is_seen_once_another_store_creates_it(run_async: RunAsync, fresh_pg_url: str) -> None:
    async def scenario() -> tuple[Record | None, Record | None]:
        writer = await PostgresStorage.open(fresh_pg_url)
        reader = await PostgresStorage.open(fresh_pg_url)
        try:
            first = await reader.get(KEY)  # missing: now known missing by the reader
            await writer.commit([Put(_record(1, b'{"v": 1}'), None)])
            seen = await reader.get(KEY)
            deadline = time.monotonic() + 3
            while seen is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
                seen = await reader.get(KEY)
            return first, seen
        finally:
            await writer.close()
            await reader.close()

    first, seen = run_async(scenario())
    assert first is None and seen is not None and seen.version == 1


@pytest.mark.postgres
def test_a_key_read_as_missing_is_seen_at_once_by_the_store_that_creates_it(
    run_async: RunAsync, fresh_pg_url: str
) -> None:
    async def scenario() -> tuple[Record | None, Record | None, Record | None]:
        store = await PostgresStorage.open(fresh_pg_url)
        try:
            first = await store.get(KEY)
            again = await store.get(KEY)
            await store.commit([Put(_record(1), None)])
            return first, again, await store.get(KEY)
        finally:
            await store.close()

    first, again, created = run_async(scenario())
    assert first is None and again is None and created == _record(1)
