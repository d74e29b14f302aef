"""The storage conformance suite: every backend must pass every ``run_*`` check here.

In the manner of kubernetes' ``pkg/storage/testing/store_tests.go``: each check takes an open
:class:`~plinth.storage.base.Storage`, works in an org of its own, and asserts the contract
of ``base.py``. ``test_sqlite.py`` and ``test_postgres.py`` run every entry of :data:`CHECKS`.

Covered here: create/get, create of an existing key, compare-and-swap updates and deletes,
all-or-nothing batches (records, refs, events, meta), refs and referrers, events, meta,
ping. ``conformance_query.py`` covers keyset paging and every query op;
``property_query.py`` compares random filters and sorts with ``evaluate.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import orjson

from plinth.storage.base import Delete, Key, Operation, Put, SetMeta, Storage, StorageError, Tally
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record, pages
from tests.storage import conformance_changes, conformance_concurrent, conformance_query
from tests.storage.records import (
    assert_same,
    create,
    expect_error,
    make_event,
    make_record,
    names,
    new_org,
    next_version,
    whats,
)


async def run_create_and_get(store: Storage) -> None:
    org = new_org()
    record = make_record(org, "alpha", {"spec": {"text": "é ü 你好", "n": 1.5, "list": [1, None, True]}})
    await create(store, [record])
    assert_same(await store.get(record.key), record)
    for elsewhere in (
        Key(new_org(), record.key.kind, "", "alpha"),
        Key(org, "other", "", "alpha"),
        Key(org, record.key.kind, "gvc1", "alpha"),
        Key(org, record.key.kind, "", "beta"),
    ):
        assert await store.get(elsewhere) is None


async def run_create_of_existing_key_fails_and_changes_nothing(store: Storage) -> None:
    org = new_org()
    original = make_record(org, "alpha", {"spec": {"v": 1}})
    await store.commit([Put(original, None, refs=("/org/x/user/a",)), make_event(original.key, "created")])
    again = make_record(org, "alpha", {"spec": {"v": 2}})
    retry = [Put(again, None, refs=("/org/x/user/b",)), make_event(again.key, "again")]
    await expect_error("exists", store.commit(retry))
    assert_same(await store.get(original.key), original)
    assert names(await store.referrers(org, "/org/x/user/a", [original.key.kind])) == ["alpha"]
    assert await store.referrers(org, "/org/x/user/b", [original.key.kind]) == []
    assert whats(await store.events(original.key, 0, 10)) == ["created"]


async def run_update_is_compare_and_swap(store: Storage) -> None:
    org = new_org()
    v1 = make_record(org, "alpha", {"spec": {"v": 1}})
    await create(store, [v1])
    v2 = next_version(v1, {"spec": {"v": 2}})
    await store.commit([Put(v2, expected_version=1)])
    assert_same(await store.get(v1.key), v2)

    stale = next_version(v1, {"spec": {"v": "stale"}})
    error = await expect_error("conflict", store.commit([Put(stale, expected_version=1)]))
    assert error.key == v1.key
    assert_same(await store.get(v1.key), v2)

    missing = next_version(make_record(org, "ghost"))
    await expect_error("not_found", store.commit([Put(missing, expected_version=1)]))
    assert await store.get(missing.key) is None


async def run_delete_checks_the_version(store: Storage) -> None:
    org = new_org()
    v1 = make_record(org, "alpha")
    v2 = next_version(v1)
    await create(store, [v1])
    await store.commit([Put(v2, expected_version=1)])
    await expect_error("conflict", store.commit([Delete(v1.key, expected_version=1)]))
    assert_same(await store.get(v1.key), v2)
    await store.commit([Delete(v1.key, expected_version=2)])
    assert await store.get(v1.key) is None
    await expect_error("not_found", store.commit([Delete(v1.key, expected_version=2)]))


async def run_failed_batch_leaves_nothing(store: Storage) -> None:
    org = new_org()
    taken = make_record(org, "taken", {"spec": {"v": 1}})
    await create(store, [taken])
    newcomer = make_record(org, "newcomer")
    earlier: list[Operation] = [
        Put(newcomer, None, refs=("/org/x/gvc/g",)),
        make_event(newcomer.key, "created"),
        Put(next_version(taken, {"spec": {"v": 2}}), expected_version=1),
        SetMeta("batch-marker", org),
    ]
    failing_last_ops: list[tuple[str, Operation]] = [
        ("exists", Put(make_record(org, "taken"), None)),
        ("conflict", Put(next_version(taken), expected_version=7)),
        ("not_found", Delete(Key(org, taken.key.kind, "", "ghost"), expected_version=1)),
    ]
    for code, last in failing_last_ops:
        await expect_error(code, store.commit([*earlier, last]))
        assert await store.get(newcomer.key) is None
        assert await store.referrers(org, "/org/x/gvc/g", [newcomer.key.kind]) == []
        assert await store.events(newcomer.key, 0, 10) == []
        assert await store.get_meta("batch-marker") != org
        assert_same(await store.get(taken.key), taken)


async def run_refs_follow_the_record(store: Storage) -> None:
    org = new_org()
    v1 = make_record(org, "alpha")
    await store.commit([Put(v1, None, refs=("/a", "/b", "/a"))])
    assert names(await store.referrers(org, "/a", [v1.key.kind])) == ["alpha"]
    v2 = next_version(v1)
    await store.commit([Put(v2, expected_version=1, refs=("/b", "/c"))])
    assert await store.referrers(org, "/a", [v1.key.kind]) == []
    for href in ("/b", "/c"):
        [found] = await store.referrers(org, href, [v1.key.kind])
        assert_same(found, v2)
    await store.commit([Delete(v1.key, expected_version=2)])
    for href in ("/a", "/b", "/c"):
        assert await store.referrers(org, href, [v1.key.kind]) == []
    # A record recreated under the same name starts without the old links.
    await create(store, [make_record(org, "alpha")])
    assert await store.referrers(org, "/b", [v1.key.kind]) == []


async def run_referrers_by_kind(store: Storage) -> None:
    org = new_org()
    target = f"/org/{org}/user/u"
    pointing = [
        make_record(org, "p2", kind="policy"),
        make_record(org, "p1", kind="policy"),
        make_record(org, "g1", kind="group"),
        make_record(org, "w1", kind="workload", parent="gvc1"),
    ]
    unrelated = make_record(org, "p3", kind="policy")
    other_org = make_record(new_org(), "p1", kind="policy")
    await store.commit(
        [Put(r, None, refs=(target, "/elsewhere")) for r in pointing]
        + [Put(unrelated, None, refs=("/elsewhere",)), Put(other_org, None, refs=(target,))]
    )
    found = await store.referrers(org, target, ["policy", "group"])
    assert [(r.key.kind, r.key.name) for r in found] == [("group", "g1"), ("policy", "p1"), ("policy", "p2")]
    assert_same(found[0], pointing[2])
    assert [r.key for r in await store.referrers(org, target, ["workload"])] == [pointing[3].key]
    assert await store.referrers(org, target, []) == []
    assert await store.referrers(org, target, ["gvc"]) == []


async def run_events_in_order_after_a_seq(store: Storage) -> None:
    org = new_org()
    record = make_record(org, "alpha")
    neighbour = make_record(org, "beta")
    await store.commit(
        [Put(record, None), make_event(record.key, "e0"), Put(neighbour, None), make_event(neighbour.key, "n0")]
    )
    await store.commit([make_event(record.key, "e1"), make_event(record.key, "e2")])
    for i in range(3, 6):
        await store.commit([make_event(record.key, f"e{i}"), make_event(neighbour.key, f"n{i}")])
    events = await store.events(record.key, 0, 100)
    assert whats(events) == [f"e{i}" for i in range(6)]
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs))
    page = await store.events(record.key, seqs[1], 2)
    assert whats(page) == ["e2", "e3"]
    assert await store.events(record.key, seqs[-1], 10) == []


async def run_events_outlive_the_record_and_continue(store: Storage) -> None:
    org = new_org()
    first = make_record(org, "alpha")
    await store.commit([Put(first, None), make_event(first.key, "created")])
    await store.commit([Delete(first.key, expected_version=1), make_event(first.key, "deleted")])
    assert whats(await store.events(first.key, 0, 10)) == ["created", "deleted"]
    second = make_record(org, "alpha")
    await store.commit([Put(second, None), make_event(second.key, "recreated")])
    events = await store.events(second.key, 0, 10)
    assert whats(events) == ["created", "deleted", "recreated"]
    assert events[2].seq > events[1].seq


async def run_meta_set_and_only_if_absent(store: Storage) -> None:
    name = f"setting-{new_org()}"
    assert await store.get_meta(name) is None
    await store.commit([SetMeta(name, "first", only_if_absent=True)])
    assert await store.get_meta(name) == "first"
    await store.commit([SetMeta(name, "second", only_if_absent=True)])
    assert await store.get_meta(name) == "first"
    await store.commit([SetMeta(name, "third")])
    assert await store.get_meta(name) == "third"


async def run_meta_compare_and_set(store: Storage) -> None:
    name = f"setting-{new_org()}"
    await store.commit([SetMeta(name, "mine", replacing="absent")])
    assert await store.get_meta(name) is None  # nothing to replace: not created either
    await store.commit([SetMeta(name, "first")])
    await store.commit([SetMeta(name, "second", replacing="not-first")])
    assert await store.get_meta(name) == "first"
    await store.commit([SetMeta(name, "second", replacing="first")])
    assert await store.get_meta(name) == "second"


async def run_meta_with_prefix(store: Storage) -> None:
    prefix = f"p%_{new_org()}."  # LIKE's wildcards mean themselves
    await store.commit([SetMeta(prefix + "b", "2"), SetMeta(prefix + "a", "1"), SetMeta(prefix[:-1] + "X", "no")])
    assert [(e.name, e.value) for e in await store.meta_with_prefix(prefix)] == [
        (prefix + "a", "1"),
        (prefix + "b", "2"),
    ]
    assert await store.meta_with_prefix(f"none-{new_org()}.") == []


async def run_ping_answers(store: Storage) -> None:
    # The store is reachable, so ping returns rather than raising "unavailable".
    assert await store.ping() is None


Check = Callable[[Storage], Awaitable[None]]


async def _counter(store: Storage, key: Key) -> tuple[int, int]:
    record = await store.get(key, fresh=True)
    assert record is not None
    doc = orjson.loads(record.doc)
    return doc["current"], record.version


async def run_tally_counts_up_to_the_ceiling_and_down_to_zero(store: Storage) -> None:
    org = new_org()
    quota = make_record(org, "quota", {"current": 0, "max": 2, "unit": "things"})
    await create(store, [quota])
    await store.commit([Tally(quota.key, 1, "current", "max")])
    await store.commit([Tally(quota.key, 1, "current", "max")])
    assert await _counter(store, quota.key) == (2, 1)  # the version never moves

    item = make_record(org, "third")
    error = await expect_error("limit", store.commit([Put(item, None), Tally(quota.key, 1, "current", "max")]))
    assert error.key == quota.key
    assert await store.get(item.key) is None  # the whole batch failed
    assert await _counter(store, quota.key) == (2, 1)

    for _ in range(3):
        await store.commit([Tally(quota.key, -1, "current", "max")])
    assert await _counter(store, quota.key) == (0, 1)  # never below zero
    assert orjson.loads((await store.get(quota.key, fresh=True)).doc)["unit"] == "things"  # type: ignore[union-attr]
    # A counter that does not exist counts nothing: the batch goes through.
    await store.commit([Put(item, None), Tally(Key(org, "quota", "", "missing"), 1, "current", "max")])
    assert await store.get(item.key) is not None


async def run_tally_never_gives_the_last_unit_twice(store: Storage) -> None:
    org = new_org()
    quota = make_record(org, "quota", {"current": 0, "max": 5})
    await create(store, [quota])

    async def take(n: int) -> bool:
        try:
            await store.commit([Put(make_record(org, f"item{n}"), None), Tally(quota.key, 1, "current", "max")])
        except StorageError as exc:
            assert exc.code == "limit"
            return False
        return True

    taken = await asyncio.gather(*(take(n) for n in range(12)))
    assert sum(taken) == 5
    assert (await _counter(store, quota.key))[0] == 5


async def run_scan_walks_every_page(store: Storage) -> None:
    org = new_org()
    records = [make_record(org, f"item-{n:02d}") for n in range(7)]
    await create(store, records)
    request = ListRequest(org, records[0].key.kind, "", 3)
    walked = [[r.key.name for r in page] async for page in pages(store, request)]
    assert walked == [["item-00", "item-01", "item-02"], ["item-03", "item-04", "item-05"], ["item-06"]]
    assert [r.key.name for r in await every_record(store, request)] == [r.key.name for r in records]
    assert await every_record(store, ListRequest(new_org(), records[0].key.kind, "", 3)) == []


CHECKS: list[Check] = [
    run_create_and_get,
    run_create_of_existing_key_fails_and_changes_nothing,
    run_update_is_compare_and_swap,
    run_delete_checks_the_version,
    run_failed_batch_leaves_nothing,
    run_refs_follow_the_record,
    run_referrers_by_kind,
    run_events_in_order_after_a_seq,
    run_events_outlive_the_record_and_continue,
    run_meta_set_and_only_if_absent,
    run_meta_compare_and_set,
    run_meta_with_prefix,
    run_ping_answers,
    run_tally_counts_up_to_the_ceiling_and_down_to_zero,
    run_tally_never_gives_the_last_unit_twice,
    run_scan_walks_every_page,
    *conformance_query.CHECKS,
    *conformance_changes.CHECKS,
    *conformance_concurrent.CHECKS,
]
