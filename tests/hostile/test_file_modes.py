"""Files Plinth writes are its owner's only, whatever the umask (issue 21, defect 2).

A probe found the data directory 0755, ``plinth.db`` 0644 and backups 0644: another local user
copied the database. Each test runs the real server or command under a permissive umask
(``0o000``, ``0o022``) and reads the modes back; a store left by an older Plinth with loose
modes is tightened when it is opened again.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plinth.sealing import generate_key
from plinth.sealing.keys import key_file_text
from tests.support.server import start_server

UMASKS = [0o000, 0o022]


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    """``mask`` for this process and what it starts (a child inherits its umask)."""
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def plinth(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    return subprocess.run([sys.executable, "-m", "plinth", *args], capture_output=True, text=True, env=env, timeout=60)


def assert_private_store(data: Path) -> None:
    assert mode(data) == 0o700, oct(mode(data))
    names = ["plinth.db", "secrets.key", "bootstrap-admin.key", "plinth.db-changes"]
    # While a server has the store open, SQLite keeps its WAL files beside it: they hold data too.
    names += [n for n in ("plinth.db-wal", "plinth.db-shm") if (data / n).exists()]
    for name in names:
        assert mode(data / name) == 0o600, f"{name}: {oct(mode(data / name))}"


@pytest.mark.parametrize("mask", UMASKS, ids=oct)
def test_a_new_store_its_keys_and_its_backups_and_exports_are_private(tmp_path: Path, mask: int) -> None:
    data = tmp_path / "data"
    with umask(mask):
        server = start_server(data)
        try:
            with server.client() as api:
                assert api.post("/org/acme/gvc", json={"name": "main"}).status_code == 201
            assert (data / "plinth.db-wal").exists(), "a serving store has its WAL open"
            assert_private_store(data)
            backup = plinth("backup", "--data-dir", str(data), "-o", str(tmp_path / "b.db"))
            assert backup.returncode == 0, backup.stderr
            export = plinth("export", "--data-dir", str(data), "-o", str(tmp_path / "e.jsonl"))
            assert export.returncode == 0, export.stderr
        finally:
            server.stop()
    assert mode(tmp_path / "b.db") == 0o600, oct(mode(tmp_path / "b.db"))
    assert mode(tmp_path / "e.jsonl") == 0o600, oct(mode(tmp_path / "e.jsonl"))
    assert_private_store(data)


def test_a_store_left_readable_by_an_older_plinth_is_made_private_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data)
    server.stop()
    # As the probe found it: directory 0755, database and WAL files 0644.
    os.chmod(data, 0o755)
    for path in data.iterdir():
        if path.name.startswith("plinth.db"):
            os.chmod(path, 0o644)
    with umask(0o022):
        server = start_server(data)
    try:
        assert_private_store(data)
    finally:
        server.stop()


def test_a_database_named_by_url_is_private_but_its_directory_is_left_alone(tmp_path: Path) -> None:
    """``--database-url sqlite:///...`` names a file in a directory of the operator's: the file
    and its WAL are made private, the directory (maybe shared) keeps its mode."""
    operators_dir = tmp_path / "operators-dir"
    operators_dir.mkdir()
    os.chmod(operators_dir, 0o755)
    key_file = operators_dir / "keys"
    key_file.write_text(key_file_text([generate_key()]))
    store = ("--database-url", f"sqlite:///{operators_dir / 'x.db'}", "--secrets-key-file", str(key_file))
    with umask(0o000):
        server = start_server(tmp_path / "data", extra_args=store)
        try:
            # A rotation rewrites the key file beside it: 0600, and the directory still the operator's.
            rotated = plinth("secrets", "rotate-key", *store)
            assert rotated.returncode == 0, rotated.stderr
            assert mode(operators_dir) == 0o755
            for name in ("x.db", "x.db-wal", "x.db-shm", "keys"):
                assert mode(operators_dir / name) == 0o600, f"{name}: {oct(mode(operators_dir / name))}"
        finally:
            server.stop()


@pytest.mark.parametrize("mask", UMASKS, ids=oct)
def test_cli_profiles_which_hold_keys_are_private(tmp_path: Path, mask: int) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")} | {"PLINTH_HOME": str(home)}
    args = ["profile", "create", "p", "--endpoint", "http://127.0.0.1:9", "--token", "not-a-real-key"]
    with umask(mask):
        made = subprocess.run(
            [sys.executable, "-m", "plinth", *args], capture_output=True, text=True, env=env, timeout=60
        )
    assert made.returncode == 0, made.stderr
    assert mode(home) == 0o700 and mode(home / "profiles") == 0o700
    for path in (home / "profiles").iterdir():
        assert mode(path) == 0o600, f"{path.name}: {oct(mode(path))}"
