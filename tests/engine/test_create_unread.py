"""A create takes its name as free without reading it first (``engine/writes.py``), and
answers a taken name exactly as when it read first: 409 naming the item, the stored item
untouched, no commit retry counted, and what a dry run answers unchanged."""

from __future__ import annotations

import orjson
import pytest

from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.errors import Conflict, ValidationFailed
from plinth.metrics import COMMIT_RETRIES
from plinth.storage.base import Key, Storage
from tests.aio import RunAsync

SECRETS = RequestInfo(kind="secret", org="acme")


def _retries() -> float:
    return COMMIT_RETRIES.labels("secret")._value.get()


def test_a_create_of_a_taken_name_is_409_and_changes_nothing(
    engine: Engine, sqlite_store: Storage, run_async: RunAsync
) -> None:
    body = {"name": "db", "type": "opaque", "data": {"payload": "one"}}

    async def scenario() -> tuple[Exception, Exception, bytes, bytes]:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        created = await engine.create(SECRETS, body)
        assert created.status == 201
        stored = await sqlite_store.get(Key("acme", "secret", "", "db"))
        assert stored is not None
        retries = _retries()
        with pytest.raises(Conflict) as taken:
            await engine.create(SECRETS, {**body, "description": "again"})
        with pytest.raises(Conflict) as dry:
            await engine.create(SECRETS, {**body, "description": "again"}, dry_run=True)
        assert _retries() == retries  # answered, not retried as a lost race
        again = await sqlite_store.get(Key("acme", "secret", "", "db"))
        assert again is not None
        return taken.value, dry.value, stored.doc, again.doc

    taken, dry, before, after = run_async(scenario())
    assert "already exists" in str(taken) and "already exists" in str(dry)
    assert before == after


def test_a_bad_create_of_a_taken_name_is_still_409(engine: Engine, run_async: RunAsync) -> None:
    """The name's being taken is judged before the body, as when the create read first."""

    async def scenario() -> None:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        await engine.create(SECRETS, {"name": "db", "type": "opaque", "data": {"payload": "one"}})
        with pytest.raises(Conflict):
            await engine.create(SECRETS, {"name": "db", "type": "no-such-type"})
        with pytest.raises(ValidationFailed):
            await engine.create(SECRETS, {"name": "free", "type": "no-such-type"})

    run_async(scenario())


def test_a_create_of_a_free_name_is_stored_once(engine: Engine, sqlite_store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> bytes:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        created = await engine.create(SECRETS, {"name": "db", "type": "opaque", "data": {"payload": "one"}})
        assert created.status == 201 and orjson.loads(created.doc)["version"] == 1
        stored = await sqlite_store.get(Key("acme", "secret", "", "db"))
        assert stored is not None
        return stored.doc

    assert orjson.loads(run_async(scenario()))["name"] == "db"
