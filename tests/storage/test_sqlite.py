"""The SQLite backend against the shared storage conformance suite."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from plinth.storage import open_storage
from plinth.storage.base import Storage
from plinth.storage.sqlite import SqliteStorage
from tests.aio import RunAsync
from tests.storage import conformance
from tests.storage.property_query import run_filters_agree_with_evaluator
from tests.storage.records import create, make_record, new_org


@pytest.fixture
def store(tmp_path: Path, run_async: RunAsync) -> Iterator[SqliteStorage]:
    opened = run_async(SqliteStorage.open(tmp_path / "plinth.db"))
    yield opened
    run_async(opened.close())


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda check: check.__name__)
def test_conformance(store: Storage, run_async: RunAsync, check: Callable[[Storage], Awaitable[None]]) -> None:
    run_async(check(store))


def test_filters_agree_with_evaluator(store: Storage, run_async: RunAsync) -> None:
    run_filters_agree_with_evaluator(store, run_async)


def test_open_storage_defaults_to_sqlite_in_the_data_dir(tmp_path: Path, run_async: RunAsync) -> None:
    opened = run_async(open_storage(None, tmp_path))
    try:
        assert isinstance(opened, SqliteStorage)
        assert opened.path == tmp_path / "plinth.db"
        assert opened.path.exists()
    finally:
        run_async(opened.close())


def test_concurrent_writes_share_commits(store: SqliteStorage, run_async: RunAsync) -> None:
    """Writes queued while a commit is in flight go into one transaction (``group_commit.py``)."""
    org = new_org()

    async def write_all() -> None:
        await asyncio.gather(*(create(store, [make_record(org, f"r-{n}")]) for n in range(40)))

    before = store._group.groups
    run_async(write_all())
    assert store._group.groups - before < 40
    assert all(run_async(store.get(make_record(org, f"r-{n}").key)) is not None for n in range(40))


def test_referrers_are_found_through_the_links_index_on_their_target(store: SqliteStorage) -> None:
    """The query plan starts from the target (``statements.SQLITE_REFS``), never from every
    item of the linking kinds: its cost must not grow with the items stored."""
    from plinth.storage import statements as st

    statement = st.render(st.referrers_sql(2, st.SQLITE_REFS), "?")
    plan = [row[3] for row in store._reader.execute("EXPLAIN QUERY PLAN " + statement, ["o", "/org/o/x", "a", "b"])]
    assert plan[0].startswith("SEARCH f USING INDEX refs_by_target"), plan
