"""Fixtures of the engine tests: an :class:`~plinth.engine.service.Engine` in this process, on a
real SQLite store in the test's temporary directory (no server, no HTTP).

Engine internals (the write pipeline, PATCH, events, sealing of fields, quotas counted) are
tested here, calling the engine as ``server/`` does. What must hold on PostgreSQL too is a
storage question, tested against both stores in ``tests/storage`` (conformance) or through a
real server in ``tests/api``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plinth.engine.service import Engine
from plinth.kinds import REGISTRY
from plinth.sealing import KeyRing, Sealer, StaticKeys, generate_key
from plinth.storage import open_storage
from plinth.storage.base import Storage
from tests.aio import RunAsync


@pytest.fixture
def sqlite_store(tmp_path: Path, run_async: RunAsync) -> Iterator[Storage]:
    """A fresh SQLite store in ``tmp_path``, opened (migrated) and closed after the test."""
    opened = run_async(open_storage(None, tmp_path))
    yield opened
    run_async(opened.close())


@pytest.fixture
def engine(sqlite_store: Storage) -> Engine:
    """The engine as ``plinth serve`` builds it (every kind, a sealer with a fresh key), on
    :func:`sqlite_store`; run its coroutines with ``run_async``."""
    return Engine(sqlite_store, REGISTRY, sealer=Sealer(StaticKeys(KeyRing((generate_key(),)))))
