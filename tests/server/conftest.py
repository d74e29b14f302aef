"""Fixtures of the server tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plinth.storage import open_storage
from plinth.storage.base import Storage
from tests.aio import RunAsync


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path, run_async: RunAsync) -> Iterator[Storage]:
    """A fresh store of each backend, opened (migrated) and closed after the test."""
    url = request.getfixturevalue("fresh_pg_url") if request.param == "postgres" else None
    opened = run_async(open_storage(url, tmp_path))
    yield opened
    run_async(opened.close())
