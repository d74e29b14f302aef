"""The PostgreSQL backend against the shared storage conformance suite, plus what only it has:
unreachable servers, lost connections, concurrent migrations and LISTEN/NOTIFY."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from plinth.storage import open_storage
from plinth.storage.base import Put, Storage, StorageError
from plinth.storage.postgres import CHANGES_LOCK_KEY, PostgresStorage
from tests.aio import RunAsync
from tests.storage import conformance
from tests.storage.property_query import run_filters_agree_with_evaluator
from tests.storage.records import assert_same, create, make_record, new_org, next_version

pytestmark = pytest.mark.postgres

#: An upper bound on waiting for something that must happen, not a speed requirement.
PATIENCE_SECONDS = 30


@pytest.fixture
def store(fresh_pg_url: str, run_async: RunAsync) -> Iterator[PostgresStorage]:
    opened = run_async(PostgresStorage.open(fresh_pg_url))
    yield opened
    run_async(opened.close())


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda check: check.__name__)
def test_conformance(store: Storage, run_async: RunAsync, check: Callable[[Storage], Awaitable[None]]) -> None:
    run_async(check(store))


def test_filters_agree_with_evaluator(store: Storage, run_async: RunAsync) -> None:
    run_filters_agree_with_evaluator(store, run_async)


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_open_storage_picks_postgres_for_either_scheme(
    fresh_pg_url: str, run_async: RunAsync, scheme: str, tmp_path: Path
) -> None:
    url = scheme + fresh_pg_url.removeprefix("postgresql")
    opened = run_async(open_storage(url, tmp_path))
    try:
        assert isinstance(opened, PostgresStorage)
        run_async(opened.ping())
    finally:
        run_async(opened.close())


def test_unreachable_server_is_unavailable(run_async: RunAsync) -> None:
    # Nothing listens on port 1, so the connection is refused.
    with pytest.raises(StorageError) as caught:
        run_async(PostgresStorage.open("postgresql://postgres@127.0.0.1:1/nothing"))
    assert caught.value.code == "unavailable"


def test_replicas_starting_together_migrate_once(fresh_pg_url: str, run_async: RunAsync) -> None:
    async def scenario() -> None:
        first, second = await asyncio.gather(*(PostgresStorage.open(fresh_pg_url) for _ in range(2)))
        try:
            record = make_record(new_org(), "shared")
            await create(first, [record])
            assert_same(await second.get(record.key), record)
        finally:
            await asyncio.gather(first.close(), second.close())

    run_async(scenario())


def test_lost_connections_are_replaced_before_they_fail_a_request(
    store: PostgresStorage, fresh_pg_url: str, pg_url: str, run_async: RunAsync
) -> None:
    # A terminated session says so on its socket; the store sees it before using the
    # connection (tests/faults/test_store_outage.py has the same after a cut link).
    record = make_record(new_org(), "alpha")
    run_async(create(store, [record]))
    _terminate_sessions(pg_url, fresh_pg_url.rsplit("/", 1)[1])
    assert_same(run_async(store.get(record.key)), record)


def test_notifications_reach_listeners_of_the_channel(fresh_pg_url: str, run_async: RunAsync) -> None:
    async def scenario() -> None:
        listener, sender = await asyncio.gather(*(PostgresStorage.open(fresh_pg_url) for _ in range(2)))
        heard: asyncio.Queue[str | None] = asyncio.Queue()
        try:
            await listener.listen("plinth_keys", heard.put_nowait)
            await sender.notify("plinth_other", "not for us")
            await sender.notify("plinth_keys", "key-1 revoked")
            # Notifications arrive in the order sent, so "not for us" would have come first.
            assert await asyncio.wait_for(heard.get(), PATIENCE_SECONDS) == "key-1 revoked"
        finally:
            await asyncio.gather(listener.close(), sender.close())

    run_async(scenario())


def test_listener_reconnects_and_says_it_may_have_missed_some(
    fresh_pg_url: str, pg_url: str, run_async: RunAsync
) -> None:
    async def scenario() -> None:
        store = await PostgresStorage.open(fresh_pg_url)
        heard: asyncio.Queue[str | None] = asyncio.Queue()
        try:
            await store.listen("plinth_policies", heard.put_nowait)
            await asyncio.to_thread(_terminate_sessions, pg_url, fresh_pg_url.rsplit("/", 1)[1])
            assert await asyncio.wait_for(heard.get(), PATIENCE_SECONDS) is None
            await _retry_while_unavailable(lambda: store.notify("plinth_policies", "policy-1 changed"))
            assert await asyncio.wait_for(heard.get(), PATIENCE_SECONDS) == "policy-1 changed"
        finally:
            await store.close()

    run_async(scenario())


def _terminate_sessions(admin_url: str, database: str) -> None:
    """Cut every session to ``database``, as a server restart or a network cut would."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        )


async def _retry_while_unavailable(action: Callable[[], Awaitable[None]]) -> None:
    """The pool may still hold connections that were cut; each failed call discards one."""
    for _ in range(10):
        try:
            await action()
            return
        except StorageError as error:
            assert error.code == "unavailable"
    await action()


def test_a_commit_chosen_as_a_deadlock_victim_is_run_again(
    store: PostgresStorage, fresh_pg_url: str, run_async: RunAsync
) -> None:
    """Another session locks ``second``, then waits for ``first``, which the commit has locked
    while it waits for ``second``. PostgreSQL breaks the cycle by rolling back the session whose
    ``deadlock_timeout`` runs out first: the commit's (the server's 1 s; the other's is 30 s).
    The commit must then run again and store both records, not answer 503 (``unavailable``)."""
    org = new_org()
    first, second = make_record(org, "first"), make_record(org, "second")
    run_async(create(store, [first, second]))

    async def scenario() -> None:
        other = await psycopg.AsyncConnection.connect(fresh_pg_url, autocommit=False)
        try:
            timeout = await (await other.execute("SHOW deadlock_timeout")).fetchone()
            assert timeout is not None and timeout[0] == "1s", "the server's deadlock_timeout decides the victim"
            await other.execute("SET deadlock_timeout = '30s'")
            touch = "UPDATE resources SET doc = doc WHERE org = %s AND name = %s"
            await other.execute(touch, (org, "second"))
            commit = asyncio.ensure_future(store.commit([Put(next_version(first), 1), Put(next_version(second), 1)]))
            await asyncio.sleep(0.3)  # the commit holds first and waits for second
            await other.execute(touch, (org, "first"))  # waits until the commit is rolled back
            await other.commit()
            await asyncio.wait_for(commit, PATIENCE_SECONDS)
        finally:
            await other.close()

    run_async(scenario())
    assert_same(run_async(store.get(first.key)), next_version(first))
    assert_same(run_async(store.get(second.key)), next_version(second))


def test_change_seqs_are_drawn_in_commit_order(store: PostgresStorage, fresh_pg_url: str, run_async: RunAsync) -> None:
    """A transaction that drew a change seq and has not committed holds every other writer back
    from drawing one: no reader can see a later seq while an earlier one may still commit
    (the anomaly BIGSERIAL alone allows, docs/watch.md)."""

    async def scenario() -> list[tuple[str, int]]:
        org = new_org()
        await create(store, [make_record(org, "first")])
        slow = await psycopg.AsyncConnection.connect(fresh_pg_url)
        try:
            # What PostgresStorage does at the end of a commit, left uncommitted.
            await slow.execute("SELECT pg_advisory_xact_lock(%s)", (CHANGES_LOCK_KEY,))
            cursor = await slow.execute(
                "INSERT INTO changes (org, kind, parent, name, type, doc, at)"
                " VALUES (%s, 'thing', '', 'slow', 'ADDED', '{}', 0) RETURNING seq",
                (org,),
            )
            row = await cursor.fetchone()
            assert row is not None
            fast = asyncio.create_task(store.commit([Put(make_record(org, "fast"), None)]))
            await asyncio.sleep(0.3)
            assert not fast.done(), "a writer drew a seq while an earlier one was uncommitted"
            assert [c for c in await store.changes(row[0] - 1, 10) if c.key.org == org] == []
            await slow.commit()
            await fast
        finally:
            await slow.close()
        return [(c.key.name, c.seq) for c in await store.changes(0, 1000) if c.key.org == org]

    seen = run_async(scenario())
    assert [name for name, _ in seen] == ["first", "slow", "fast"]
    assert [seq for _, seq in seen] == sorted(seq for _, seq in seen)
