"""``plinth backup``: a SQLite store backed up while clients write to it, then restored by starting
a server on the copy, holds every write acknowledged before the backup began."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.support.server import ServerProcess, start_server

WRITERS = 3


def _plinth(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    return subprocess.run([sys.executable, "-m", "plinth", *args], capture_output=True, text=True, env=env, timeout=60)


class SteadyWriters:
    """Threads creating GVCs one after another until stopped; ``acked`` holds each 201's name."""

    def __init__(self, server: ServerProcess):
        self.server = server
        self.acked: list[str] = []
        self.attempted: set[str] = set()
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._write, args=(w,)) for w in range(WRITERS)]

    def _write(self, writer: int) -> None:
        with self.server.client() as api:
            n = 0
            while not self._stop.is_set():
                name = f"w{writer}-{n}"
                with self._lock:
                    self.attempted.add(name)
                reply = api.post("/org/acme/gvc", json={"name": name})
                with self._lock:
                    if reply.status_code == 201:
                        self.acked.append(name)
                    else:
                        self.failures.append(f"{name}: {reply.status_code} {reply.text[:200]}")
                n += 1

    def acked_now(self) -> set[str]:
        with self._lock:
            return set(self.acked)

    def __enter__(self) -> SteadyWriters:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def _wait_for(writers: SteadyWriters, count: int) -> None:
    import time

    deadline = time.monotonic() + 60
    while len(writers.acked_now()) < count:
        assert time.monotonic() < deadline, f"the writers made {len(writers.acked_now())} writes: {writers.failures}"
        time.sleep(0.01)


def test_a_backup_under_writes_restores_every_write_acknowledged_before_it_began(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data, workers=2)
    try:
        with server.client() as api:
            secret = {"name": "db", "type": "opaque", "data": {"payload": "sealed-before-backup"}}
            assert api.post("/org/acme/secret", json=secret).status_code == 201
        with SteadyWriters(server) as writers:
            _wait_for(writers, 150)
            before = writers.acked_now()  # every one of these was answered 201 before the backup began
            done = _plinth("backup", "--data-dir", str(data), "--output", str(tmp_path / "backup.db"))
            after_backup = writers.acked_now()
            _wait_for(writers, len(after_backup) + 20)  # the server went on taking writes
        assert writers.failures == []
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert "a snapshot of the store as it was when the backup began" in done.stdout
    assert f"sealed with the keys in {data / 'secrets.key'}" in done.stdout
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".backup.db")] == []  # no partial file left

    # Restore: a new data directory holding the copy and the secrets key, and a server on it.
    restored_dir = tmp_path / "restored"
    restored_dir.mkdir()
    shutil.copy(tmp_path / "backup.db", restored_dir / "plinth.db")
    shutil.copy(data / "secrets.key", restored_dir / "secrets.key")
    restored = start_server(restored_dir)
    try:
        with restored.client(server.key) as api:  # the old admin key: its signing key is in the store
            names = _all_gvcs(api)
            assert before <= names
            assert names <= writers.attempted  # nothing that was never sent
            assert api.get("/org/acme/secret/db/-reveal").json()["data"]["payload"] == "sealed-before-backup"
            assert api.post("/org/acme/gvc", json={"name": "after-restore"}).status_code == 201
    finally:
        restored.stop()


def _all_gvcs(api: httpx.Client) -> set[str]:
    names: set[str] = set()
    url: str | None = "/org/acme/gvc?limit=500"
    while url:
        page = api.get(url).json()
        names |= {item["name"] for item in page["items"]}
        url = next((link["href"] for link in page.get("links", []) if link["rel"] == "next"), None)
    return names


def test_a_server_starts_on_the_backup_file_itself(tmp_path: Path) -> None:
    """The other way to restore: ``--database-url sqlite:///<the backup>``."""
    server = start_server(tmp_path / "data")
    try:
        with server.client() as api:
            assert api.post("/org/acme/gvc", json={"name": "kept"}).status_code == 201
        assert _plinth("backup", "--data-dir", str(tmp_path / "data"), "-o", str(tmp_path / "b.db")).returncode == 0
    finally:
        server.stop()
    shutil.copy(tmp_path / "data" / "secrets.key", tmp_path / "restored-secrets.key")
    args = (
        "--database-url",
        f"sqlite:///{tmp_path / 'b.db'}",
        "--secrets-key-file",
        str(tmp_path / "restored-secrets.key"),
    )
    restored = start_server(tmp_path / "elsewhere", extra_args=args)
    try:
        with restored.client(server.key) as api:
            assert api.get("/org/acme/gvc/kept").status_code == 200
    finally:
        restored.stop()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--data-dir", "{tmp}/nothing-here", "-o", "{tmp}/b.db"), "there is no store at"),
        (("--database-url", "postgresql://db.internal/plinth", "-o", "{tmp}/b.db"), "pg_dump"),
        (("--data-dir", "{tmp}/data", "-o", "{tmp}/data/plinth.db"), "the output is the store itself"),
        (("--data-dir", "{tmp}/data", "-o", "{tmp}/no/such/dir/b.db"), "does not exist"),
    ],
)
def test_a_backup_that_cannot_be_made_says_why(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "plinth.db").write_bytes(b"")
    done = _plinth("backup", *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert done.returncode == 1 and message in done.stderr
    assert not (tmp_path / "b.db").exists()
