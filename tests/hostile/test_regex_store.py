"""What each store does with a query's regular expressions, below the API
(``storage/regex.py``; docs/api.md, "Limits")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plinth.storage import postgres, regex
from plinth.storage.base import Put, Storage, StorageError
from plinth.storage.postgres import PostgresStorage
from plinth.storage.query import Filter, ListRequest, Term
from plinth.storage.sqlite import SqliteStorage
from tests.aio import RunAsync
from tests.storage.records import make_record, new_org


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path, run_async: RunAsync) -> Iterator[Storage]:
    if request.param == "sqlite":
        opened: Storage = run_async(SqliteStorage.open(tmp_path / "plinth.db"))
    else:
        opened = run_async(PostgresStorage.open(request.getfixturevalue("fresh_pg_url")))
    yield opened
    run_async(opened.close())


def _searching(org: str, pattern: str) -> ListRequest:
    return ListRequest(org, "thing", "", 10, filter=Filter("all", (Term("~", pattern, path=("text",)),)))


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=a)", "a{256}", "x" * 257])
def test_sqlite_refuses_what_the_safe_engine_refuses(tmp_path: Path, run_async: RunAsync, pattern: str) -> None:
    # (The engine refuses these before any store sees them: tests/hostile/test_regex.py.)
    with pytest.raises(regex.PatternError):
        regex.compile_pattern(pattern)
    store = run_async(SqliteStorage.open(tmp_path / "plinth.db"))
    try:
        org = new_org()
        run_async(store.commit([Put(make_record(org, "a", {"text": "aaa"}), None)]))
        with pytest.raises(StorageError) as caught:
            run_async(store.list_page(_searching(org, pattern)))
        assert caught.value.code == "invalid"
    finally:
        run_async(store.close())


def test_a_catastrophic_pattern_is_answered_at_once_by_each_store(store: Storage, run_async: RunAsync) -> None:
    org = new_org()
    run_async(store.commit([Put(make_record(org, "a", {"text": "a" * 60}), None)]))
    assert run_async(store.list_page(_searching(org, "(a*)*b"))) == []
    assert [r.key.name for r in run_async(store.list_page(_searching(org, "(a*)*$")))] == ["a"]


@pytest.mark.postgres
def test_a_postgresql_regex_query_over_its_time_is_refused_and_the_store_stays_available(
    fresh_pg_url: str, run_async: RunAsync, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = run_async(PostgresStorage.open(fresh_pg_url))
    try:
        org = new_org()
        big = "ab" * 200_000  # each row costs PostgreSQL's engine milliseconds to search
        run_async(store.commit([Put(make_record(org, f"r{i}", {"text": big}), None) for i in range(20)]))
        monkeypatch.setattr(postgres, "REGEX_QUERY_TIMEOUT", 0.001)
        with pytest.raises(StorageError) as caught:
            run_async(store.list_page(_searching(org, "(.{0,30}){30}c")))
        assert caught.value.code == "invalid" and "regular expressions took longer" in str(caught.value)
        monkeypatch.undo()
        # The statement's own timeout is not an outage: the next request is served as usual.
        plain = ListRequest(org, "thing", "", 50)
        assert len(run_async(store.list_page(plain))) == 20
        assert len(run_async(store.list_page(_searching(org, "^ab")))) == 10
    finally:
        run_async(store.close())
