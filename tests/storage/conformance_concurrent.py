"""Concurrent commits: each one all or nothing and isolated from the others, however the
backend groups them (SQLite commits the writes queued together in one transaction,
``storage/group_commit.py``). A write that conflicts fails alone; the writes committed with it
are stored, with their refs, events and change rows, and nothing of the failed one is."""

from __future__ import annotations

import asyncio

from plinth.storage.base import Key, Operation, Put, Storage, StorageError
from tests.storage.conformance_changes import _changes_of
from tests.storage.records import KIND, assert_same, create, make_event, make_record, new_org, next_version, whats

WRITERS = 24


async def run_concurrent_commits_fail_alone(store: Storage) -> None:
    org = new_org()
    taken = make_record(org, "taken", {"spec": {"v": 1}})
    await create(store, [taken])
    batches: list[list[Operation]] = []
    for n in range(WRITERS):
        record = make_record(org, f"w-{n}")
        ops: list[Operation] = [Put(record, None, refs=(f"/org/x/gvc/g{n}",)), make_event(record.key, "created")]
        if n % 3 == 1:
            ops.append(Put(make_record(org, "taken"), None))  # exists: this whole write fails
        elif n % 3 == 2:
            ops.append(Put(next_version(taken), expected_version=9))  # conflict: fails too
        batches.append(ops)
    outcomes = await asyncio.gather(*(store.commit(ops) for ops in batches), return_exceptions=True)
    for n, outcome in enumerate(outcomes):
        key = Key(org, KIND, "", f"w-{n}")
        if n % 3 == 0:
            assert outcome is None, f"write {n} failed: {outcome!r}"
            assert await store.get(key) is not None
            assert whats(await store.events(key, 0, 10)) == ["created"]
            assert [r.key.name for r in await store.referrers(org, f"/org/x/gvc/g{n}", [KIND])] == [f"w-{n}"]
        else:
            assert isinstance(outcome, StorageError), f"write {n}: {outcome!r}"
            assert outcome.code == ("exists" if n % 3 == 1 else "conflict")
            assert await store.get(key) is None
            assert await store.events(key, 0, 10) == []
            assert await store.referrers(org, f"/org/x/gvc/g{n}", [KIND]) == []
    assert_same(await store.get(taken.key), taken)
    added = [c.key.name for c in await _changes_of(store, org) if c.type == "ADDED"]
    assert sorted(added) == sorted(["taken", *(f"w-{n}" for n in range(0, WRITERS, 3))])


async def run_concurrent_updates_of_one_record_let_one_win(store: Storage) -> None:
    org = new_org()
    v1 = make_record(org, "contended", {"spec": {"v": 1}})
    await create(store, [v1])
    rivals = [next_version(v1, {"spec": {"v": f"rival-{n}"}}) for n in range(WRITERS)]
    outcomes = await asyncio.gather(*(store.commit([Put(r, 1)]) for r in rivals), return_exceptions=True)
    winners = [n for n, outcome in enumerate(outcomes) if outcome is None]
    assert len(winners) == 1
    assert all(isinstance(o, StorageError) and o.code == "conflict" for o in outcomes if o is not None)
    assert_same(await store.get(v1.key), rivals[winners[0]])


CHECKS = [run_concurrent_commits_fail_alone, run_concurrent_updates_of_one_record_let_one_win]
