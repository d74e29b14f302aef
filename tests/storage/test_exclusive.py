"""The store's named lock (``storage/exclusive.py``): one holder at a time, taken over when the
holder lets go or its connection ends; on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from plinth.storage.exclusive import AdvisoryLock, exclusive
from tests.aio import RunAsync


def _pair(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str | None, Path]:
    if store == "sqlite":
        return None, tmp_path
    return str(request.getfixturevalue("fresh_pg_url")), tmp_path


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_one_holder_at_a_time(store: str, tmp_path: Path, request: pytest.FixtureRequest, run_async: RunAsync) -> None:
    url, data_dir = _pair(store, tmp_path, request)
    first, second = exclusive(url, data_dir, "job"), exclusive(url, data_dir, "job")
    other = exclusive(url, data_dir, "another-job")
    assert run_async(first.try_acquire())
    assert run_async(first.try_acquire())  # again: still this holder's
    assert not run_async(second.try_acquire())
    assert run_async(other.try_acquire())  # names are independent
    assert run_async(first.still_held())
    run_async(first.release())
    assert run_async(second.try_acquire())
    assert not run_async(first.try_acquire())
    for lock in (second, other):
        run_async(lock.release())


@pytest.mark.postgres
def test_a_lost_connection_frees_the_lock(fresh_pg_url: str, tmp_path: Path, run_async: RunAsync) -> None:
    holder, waiter = AdvisoryLock(fresh_pg_url, "job"), AdvisoryLock(fresh_pg_url, "job")
    assert run_async(holder.try_acquire())
    assert not run_async(waiter.try_acquire())

    async def cut() -> None:  # the session ends, as when the holder dies or the link drops
        import psycopg

        async with await psycopg.AsyncConnection.connect(fresh_pg_url, autocommit=True) as admin:
            # Only this test's database: other tests' sessions must not be cut.
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND pid <> pg_backend_pid()"
            )

    run_async(cut())
    assert not run_async(holder.still_held())
    assert run_async(waiter.try_acquire())
    run_async(waiter.release())
