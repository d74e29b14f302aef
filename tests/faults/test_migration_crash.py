"""A process killed while migrating must not lock the store forever.

Found by the crash test: ``plinth serve`` and each of its workers migrate at start, and a
SIGKILL during a start left yoyo's lock row behind, so every later start failed until an
operator ran ``yoyo break-lock``. Here a child process is killed in the middle of applying
the first migration; the next migration must then go through at once, completely.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from plinth.storage.migrate import MIGRATIONS, migrate
from plinth.storage.postgres import yoyo_url

CHILD = """
import os, signal, sys
from pathlib import Path
from yoyo.backends.base import DatabaseBackend
from plinth.storage.migrate import migrate

def die(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)  # mid-migration, holding whatever lock migrate took

DatabaseBackend.apply_migrations = die
migrate(sys.argv[1], Path(sys.argv[2]))
"""
#: Well under yoyo's own 10 s lock timeout, which a stale lock would run into.
PROMPT_S = 5.0


def _killed_while_migrating(url: str, directory: Path) -> None:
    child = subprocess.run([sys.executable, "-c", CHILD, url, str(directory)], capture_output=True, timeout=60)
    assert child.returncode == -9, child.stderr.decode()


def _migrates_promptly(url: str, directory: Path) -> None:
    started = time.monotonic()
    migrate(url, directory)
    assert time.monotonic() - started < PROMPT_S


def test_sqlite_store_migrates_after_a_process_died_migrating_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'plinth.db'}"
    _killed_while_migrating(url, MIGRATIONS / "sqlite")
    _migrates_promptly(url, MIGRATIONS / "sqlite")
    with sqlite3.connect(tmp_path / "plinth.db") as conn:
        assert conn.execute("SELECT count(*) FROM resources").fetchone() == (0,)


@pytest.mark.postgres
def test_postgres_store_migrates_after_a_process_died_migrating_it(fresh_pg_url: str) -> None:
    url = yoyo_url(fresh_pg_url)
    _killed_while_migrating(url, MIGRATIONS / "postgres")
    _migrates_promptly(url, MIGRATIONS / "postgres")
    with psycopg.connect(fresh_pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM resources").fetchone() == (0,)
