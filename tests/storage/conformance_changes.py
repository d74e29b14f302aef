"""The change log (``Storage.changes``, ``change_bounds``, ``trim_changes``, ``snapshot``): what
watches are built on. Each check reads only its own org's changes, since other checks may share
the store; the trim check needs a store of its own (both suites give each test a fresh one)."""

from __future__ import annotations

import orjson

from plinth.storage.base import Change, Delete, Put, Storage
from plinth.storage.query import ListRequest
from tests.storage.records import KIND, create, make_record, new_org, next_version


async def _changes_of(store: Storage, org: str, after: int = 0) -> list[Change]:
    found: list[Change] = []
    while batch := await store.changes(after, 100):
        found += [c for c in batch if c.key.org == org]
        after = batch[-1].seq
    return found


async def run_every_write_appends_a_change_in_commit_order(store: Storage) -> None:
    org = new_org()
    first = make_record(org, "a", {"spec": {"n": 1}})
    await create(store, [first])
    second = next_version(first, {"spec": {"n": 2}})
    await store.commit([Put(second, first.version)])
    # A status-only rewrite (same version) is a change too.
    rewritten = second.__class__(second.key, second.id, second.version, orjson.dumps({"status": {"x": 1}}))
    await store.commit([Put(rewritten, second.version)])
    await store.commit([Delete(first.key, second.version)])
    changes = await _changes_of(store, org)
    assert [c.type for c in changes] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    assert [orjson.loads(c.doc) for c in changes] == [
        orjson.loads(first.doc),
        orjson.loads(second.doc),
        {"status": {"x": 1}},
        {"status": {"x": 1}},  # a delete carries the last state
    ]
    seqs = [c.seq for c in changes]
    assert seqs == sorted(seqs) and len(set(seqs)) == 4
    bounds = await store.change_bounds()
    assert bounds.last >= seqs[-1] and bounds.horizon < seqs[0]
    assert [c.seq for c in await _changes_of(store, org, seqs[1])] == seqs[2:]


async def run_unwatched_writes_append_no_change(store: Storage) -> None:
    org = new_org()
    record = make_record(org, "hidden", kind="thing.sealed")
    await store.commit([Put(record, None, watched=False)])
    await store.commit([Delete(record.key, record.version, watched=False)])
    assert await _changes_of(store, org) == []


async def run_a_failed_batch_appends_no_change(store: Storage) -> None:
    org = new_org()
    record = make_record(org, "taken")
    await create(store, [record])
    before = await _changes_of(store, org)
    try:
        await store.commit([Put(make_record(org, "fresh"), None), Put(make_record(org, "taken"), None)])
    except Exception:
        pass
    assert await _changes_of(store, org) == before


async def run_snapshot_is_every_record_with_the_seq_it_includes(store: Storage) -> None:
    org = new_org()
    records = [make_record(org, f"n{i:04d}") for i in range(1203)]  # more than one page
    await create(store, records)
    seq, found = await store.snapshot(ListRequest(org, KIND, "", 5))
    assert [r.key.name for r in found] == [r.key.name for r in records]
    assert seq == (await store.change_bounds()).last
    assert seq >= max(c.seq for c in await _changes_of(store, org))


async def run_trim_drops_old_changes_and_moves_the_horizon(store: Storage) -> None:
    org = new_org()
    records = [make_record(org, f"t{i}") for i in range(5)]
    for record in records:
        await create(store, [record])
    seqs = [c.seq for c in await _changes_of(store, org)]
    bounds = await store.trim_changes(2, 3600)
    assert bounds.horizon == seqs[-3] and bounds.last == seqs[-1]
    assert [c.seq for c in await _changes_of(store, org)] == seqs[-2:]
    # By age: everything but the newest, which always stays.
    bounds = await store.trim_changes(1000, 0)
    assert bounds.horizon == seqs[-2] and [c.seq for c in await _changes_of(store, org)] == seqs[-1:]
    assert (await store.trim_changes(1000, 0)).horizon == seqs[-2]


CHECKS = [
    run_every_write_appends_a_change_in_commit_order,
    run_unwatched_writes_append_no_change,
    run_a_failed_batch_appends_no_change,
    run_snapshot_is_every_record_with_the_seq_it_includes,
    run_trim_drops_old_changes_and_moves_the_horizon,
]
