"""The engine fixture (``tests/engine/conftest.py``) serves what an engine test needs: writes go
to the store it reads back from, and a missing item is the API's 404."""

from __future__ import annotations

import orjson
import pytest

from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.errors import NotFound
from plinth.storage.base import Storage
from tests.aio import RunAsync


def test_an_org_written_through_the_engine_is_read_back(
    engine: Engine, sqlite_store: Storage, run_async: RunAsync
) -> None:
    async def scenario() -> dict[str, object]:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        return dict(orjson.loads(await engine.get(RequestInfo(kind="org", name="acme"))))

    assert run_async(scenario())["name"] == "acme"
    assert engine.storage is sqlite_store


def test_a_missing_item_is_not_found(engine: Engine, run_async: RunAsync) -> None:
    with pytest.raises(NotFound):
        run_async(engine.get(RequestInfo(kind="org", name="nobody")))
