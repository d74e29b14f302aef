"""SQLite's record cache is exact: a commit made by any process is seen by the next read.

Other worker processes are real processes here (``subprocess``), writing through their own
``SqliteStorage``, so what crosses between them is only the database file and its change counter.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plinth.storage import sqlite_ring
from plinth.storage.base import Delete, Key, Put, Record, StorageError
from plinth.storage.sqlite import SqliteStorage
from plinth.storage.sqlite_cache import ABSENT, ChangeCounter, SqliteRecordCache
from tests.aio import RunAsync
from tests.storage.records import make_record, next_version

#: Run in another process: read the record named by argv and store its next version.
BUMP_IN_ANOTHER_PROCESS = """
import asyncio, sys
from pathlib import Path
from plinth.storage.base import Key, Put
from plinth.storage.sqlite import SqliteStorage
from tests.storage.records import next_version

async def bump():
    store = await SqliteStorage.open(Path(sys.argv[1]))
    try:
        key = Key(*sys.argv[2:6])
        record = await store.get(key)
        await store.commit([Put(next_version(record), record.version)])
    finally:
        await store.close()

asyncio.run(bump())
"""


@pytest.fixture
def store(tmp_path: Path, run_async: RunAsync) -> Iterator[SqliteStorage]:
    opened = run_async(SqliteStorage.open(tmp_path / "plinth.db"))
    yield opened
    run_async(opened.close())


def bump_in_another_process(db: Path, key: Key) -> None:
    repo = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-c", BUMP_IN_ANOTHER_PROCESS, str(db), key.org, key.kind, key.parent, key.name]
    subprocess.run(argv, check=True, cwd=repo, timeout=60)


def test_a_commit_by_another_process_is_seen_by_the_next_read(store: SqliteStorage, run_async: RunAsync) -> None:
    record = make_record("acme", "one")
    run_async(store.commit([Put(record, None)]))
    for expected in (2, 3, 4):
        before = run_async(store.get(record.key))
        assert before is not None and run_async(store.get(record.key)) is before  # served from the cache
        bump_in_another_process(store.path, record.key)
        after = run_async(store.get(record.key))
        assert after is not None and after.version == expected


def test_an_own_commit_drops_only_what_it_wrote(store: SqliteStorage, run_async: RunAsync) -> None:
    """The process knows what it wrote: the rest of its cache stays (``SqliteRecordCache.advance``)."""
    one, two = make_record("acme", "one"), make_record("acme", "two")
    run_async(store.commit([Put(one, None), Put(two, None)]))
    cached_one = run_async(store.get(one.key))
    assert run_async(store.get(two.key)) == two
    run_async(store.commit([Put(next_version(two), two.version)]))
    assert run_async(store.get(one.key)) is cached_one  # still cached: not written
    assert run_async(store.get(two.key)) == next_version(two)  # written: read again


def test_a_commit_after_another_process_committed_drops_every_cached_record(
    store: SqliteStorage, run_async: RunAsync
) -> None:
    one, two = make_record("acme", "one"), make_record("acme", "two")
    run_async(store.commit([Put(one, None), Put(two, None)]))
    assert run_async(store.get(one.key)) == one  # cached
    bump_in_another_process(store.path, one.key)  # the cache has not looked since
    run_async(store.commit([Put(next_version(two), two.version)]))
    reread = run_async(store.get(one.key))
    assert reread is not None and reread.version == 2


def test_a_commit_by_another_process_drops_only_what_it_wrote(store: SqliteStorage, run_async: RunAsync) -> None:
    one, two = make_record("acme", "one"), make_record("acme", "two")
    run_async(store.commit([Put(one, None), Put(two, None)]))
    cached_one, cached_two = run_async(store.get(one.key)), run_async(store.get(two.key))
    bump_in_another_process(store.path, two.key)
    assert run_async(store.get(one.key)) is cached_one  # not written: still cached
    reread = run_async(store.get(two.key))
    assert reread is not cached_two and reread is not None and reread.version == 2


def test_a_cache_more_than_a_ring_behind_drops_everything(store: SqliteStorage, run_async: RunAsync) -> None:
    one = make_record("acme", "one")
    run_async(store.commit([Put(one, None)]))
    cached = run_async(store.get(one.key))
    other = ChangeCounter(store.path)
    for _ in range(sqlite_ring.RING):
        with other.writing({}):
            pass
    reread = run_async(store.get(one.key))
    assert reread == cached and reread is not cached
    other.close()


def test_a_rejected_write_in_a_group_leaves_the_cache_exact(store: SqliteStorage, run_async: RunAsync) -> None:
    one = make_record("acme", "one")
    run_async(store.commit([Put(one, None)]))
    assert run_async(store.get(one.key)) == one

    async def race() -> list[object]:
        stale = Put(next_version(one, {"spec": {"stale": True}}), 7)
        return await asyncio.gather(
            store.commit([Put(next_version(one), one.version)]), store.commit([stale]), return_exceptions=True
        )

    outcomes = run_async(race())
    assert outcomes[0] is None and isinstance(outcomes[1], StorageError)
    assert run_async(store.get(one.key)) == next_version(one)


def test_a_deleted_record_is_not_served_from_the_cache(store: SqliteStorage, run_async: RunAsync) -> None:
    record = make_record("acme", "gone")
    run_async(store.commit([Put(record, None)]))
    assert run_async(store.get(record.key)) == record
    run_async(store.commit([Delete(record.key, record.version)]))
    assert run_async(store.get(record.key)) is None


def test_the_cache_is_bounded(store: SqliteStorage) -> None:
    counter = ChangeCounter(store.path)
    cache = SqliteRecordCache(counter, max_entries=3)
    records = [make_record("acme", f"r{i}") for i in range(5)]
    cache.get(records[0].key)  # the first look takes the counter's value
    for record in records:
        cache.put(record)
    kept = [cache.get(r.key) for r in records]
    assert 0 < sum(r is not None for r in kept) <= 3
    counter.close()


def test_each_commit_moves_the_counter_to_a_new_even_value(store: SqliteStorage, run_async: RunAsync) -> None:
    counter = ChangeCounter(store.path)
    record: Record = make_record("acme", "counted")
    run_async(store.commit([Put(record, None)]))
    seen = [counter.read()]
    for _ in range(5):
        updated = next_version(record)
        run_async(store.commit([Put(updated, record.version)]))
        record = updated
        seen.append(counter.read())
    assert all(value % 2 == 0 for value in seen) and len(set(seen)) == len(seen)
    counter.close()


#: Run in another process: commit a new version under the counter, then die before the
#: counter is made even again (as a SIGKILL between the two steps would leave it).
DIE_MID_COMMIT = """
import os, sqlite3, sys
from pathlib import Path
from plinth.storage.sqlite_cache import ChangeCounter

counter = ChangeCounter(Path(sys.argv[1]))
with counter.writing():
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("UPDATE resources SET version = version + 1 WHERE name = ?", (sys.argv[2],))
    os._exit(0)
"""


def test_a_commit_that_died_in_progress_turns_the_cache_off_until_the_next(
    store: SqliteStorage, run_async: RunAsync
) -> None:
    record = make_record("acme", "orphaned")
    run_async(store.commit([Put(record, None)]))
    assert run_async(store.get(record.key)) is run_async(store.get(record.key))  # cached
    repo = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", DIE_MID_COMMIT, str(store.path), "orphaned"], check=True, cwd=repo)
    counter = ChangeCounter(store.path)
    assert counter.read() % 2 == 1
    first, second = run_async(store.get(record.key)), run_async(store.get(record.key))
    assert first is not None and first.version == 2 and second is not first  # read each time
    run_async(store.commit([Put(next_version(first), first.version)]))
    assert counter.read() % 2 == 0
    third = run_async(store.get(record.key))
    assert third is not None and third.version == 3 and run_async(store.get(record.key)) is third
    counter.close()


def test_commits_of_other_processes_wait_for_the_counter(store: SqliteStorage) -> None:
    holder, waiter = ChangeCounter(store.path), ChangeCounter(store.path)  # two descriptions: two lockers
    acquired = threading.Event()

    def wait_then_commit() -> None:
        with waiter.writing():
            acquired.set()

    with holder.writing():
        thread = threading.Thread(target=wait_then_commit)
        thread.start()
        assert not acquired.wait(0.2)  # held: the other commit waits
        odd = holder.read()
    thread.join(10)
    assert acquired.is_set() and odd % 2 == 1 and holder.read() == odd + 3  # even, after both commits
    holder.close()
    waiter.close()


def test_the_cache_is_dropped_after_its_ttl(store: SqliteStorage, run_async: RunAsync) -> None:
    record = make_record("acme", "edited")
    run_async(store.commit([Put(record, None)]))
    counter = ChangeCounter(store.path)
    cache = SqliteRecordCache(counter, ttl=0.05)
    cache.get(record.key)
    cache.put(record)
    assert cache.get(record.key) is record
    time.sleep(0.1)
    assert cache.get(record.key) is None  # dropped: read SQLite again
    counter.close()


def test_own_commits_keep_the_cache_and_others_drop_it(store: SqliteStorage) -> None:
    """``SqliteRecordCache`` over a counter: commits with known keys (this process's, in progress
    or finished; another process's, another description of the file, through the ring) keep the
    entries they did not write; a commit with unknown keys drops them all."""
    counter, other = ChangeCounter(store.path), ChangeCounter(store.path)
    cache = SqliteRecordCache(counter)
    one, two = make_record("acme", "one"), make_record("acme", "two")
    cache.get(one.key)  # the first look takes the counter's value
    cache.put(one)
    cache.put(two)
    two_v2 = next_version(two)
    with counter.writing({two.key: two_v2, one.key: None}) as span:
        assert counter.read() == span.before + 1
        assert cache.get(one.key) is one and cache.get(two.key) is two  # in progress: as before it
    assert cache.get(one.key) is None  # finished: caught up, and deleted
    assert cache.get(two.key) is two_v2  # written: what was written
    cache.put(one)
    with pytest.raises(RuntimeError), counter.writing({one.key: None}):  # rolled back: not recorded
        raise RuntimeError
    assert cache.get(one.key) is None
    cache.put(one)
    with counter.writing():  # keys unknown (an import, a trim)
        pass
    assert cache.get(one.key) is None
    cache.put(one)
    cache.put(two)
    with other.writing({two.key: None}):  # another process: what it wrote is in the ring
        pass
    assert cache.get(one.key) is one and cache.get(two.key) is None
    cache.put(two)
    with other.writing():  # another process, keys unknown
        pass
    assert cache.get(one.key) is None
    counter.close()
    other.close()


def test_a_commit_of_another_process_under_way_keeps_the_cache(store: SqliteStorage) -> None:
    """While another process commits (the counter odd, the lock held), reads are served as
    before that commit, none of whose writes is acknowledged yet, and nothing read meanwhile
    is kept; once it has finished only what it wrote is dropped. (A read at such a moment used
    to drop the whole cache: with two workers writing, most of the time.)"""
    counter, other = ChangeCounter(store.path), ChangeCounter(store.path)
    cache = SqliteRecordCache(counter)
    one, two, three = make_record("acme", "one"), make_record("acme", "two"), make_record("acme", "three")
    cache.get(one.key)
    cache.put(one)
    cache.put(two)
    with other.writing({two.key: None}) as span:
        assert counter.read() == span.before + 1
        assert cache.get(one.key) is one and cache.get(two.key) is two  # as before the commit
        assert cache.get(three.key) is None
        cache.put(three)  # read from SQLite meanwhile: not kept
        assert cache.get(three.key) is None
    assert cache.get(one.key) is one  # not written: still cached
    assert cache.get(two.key) is None  # written by it: dropped
    counter.close()
    other.close()


def test_a_commit_of_another_process_that_died_is_not_waited_for(store: SqliteStorage) -> None:
    """A counter left odd with the lock free (its holder died) is no commit under way: the
    cache is not served until the next commit moves the counter on."""
    counter, other = ChangeCounter(store.path), ChangeCounter(store.path)
    cache = SqliteRecordCache(counter)
    one = make_record("acme", "one")
    cache.get(one.key)
    cache.put(one)
    assert counter.committing(counter.read() + 1) is False  # nobody holds the lock
    other._value[0] = counter.read() + 1  # as a holder that died left it
    assert cache.get(one.key) is None and cache.get(one.key) is None
    with other.writing({}):
        assert counter.committing(counter.read()) is True
    assert cache.get(one.key) is None  # the commit that died is unknown: everything dropped
    cache.put(one)
    assert cache.get(one.key) is one
    counter.close()
    other.close()


#: Run in another process: create the record named by argv.
CREATE_IN_ANOTHER_PROCESS = """
import asyncio, sys
from pathlib import Path
from plinth.storage.base import Put
from plinth.storage.sqlite import SqliteStorage
from tests.storage.records import make_record

async def create():
    store = await SqliteStorage.open(Path(sys.argv[1]))
    try:
        await store.commit([Put(make_record(sys.argv[2], sys.argv[3]), None)])
    finally:
        await store.close()

asyncio.run(create())
"""


def test_a_key_read_as_missing_is_known_missing_until_this_process_creates_it(store: SqliteStorage) -> None:
    """Missing keys are cached too (a link to an item not created yet is read on every write)."""
    counter = ChangeCounter(store.path)
    cache = SqliteRecordCache(counter)
    record = make_record("acme", "later")
    assert cache.get(record.key) is None  # unknown: read SQLite
    cache.put_absent(record.key)
    assert cache.get(record.key) is ABSENT
    with counter.writing({record.key: record}):
        pass
    assert cache.get(record.key) == record
    counter.close()


def test_a_key_read_as_missing_is_read_again_once_another_process_creates_it(
    store: SqliteStorage, run_async: RunAsync
) -> None:
    other = make_record("acme", "unrelated")
    run_async(store.commit([Put(other, None)]))
    missing = Key("acme", other.key.kind, "", "created-elsewhere")
    for _ in range(2):
        assert run_async(store.get(missing)) is None  # the second is served from the cache
    cached_other = run_async(store.get(other.key))
    repo = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-c", CREATE_IN_ANOTHER_PROCESS, str(store.path), "acme", "created-elsewhere"]
    subprocess.run(argv, check=True, cwd=repo, timeout=60)
    created = run_async(store.get(missing))
    assert created is not None and created.key == missing
    assert run_async(store.get(other.key)) is cached_other  # not written there: still cached


def test_a_key_read_as_missing_is_read_again_once_this_process_creates_it(
    store: SqliteStorage, run_async: RunAsync
) -> None:
    record = make_record("acme", "created-here")
    assert run_async(store.get(record.key)) is None
    assert run_async(store.get(record.key)) is None
    run_async(store.commit([Put(record, None)]))
    assert run_async(store.get(record.key)) == record
    run_async(store.commit([Delete(record.key, record.version)]))
    assert run_async(store.get(record.key)) is None
