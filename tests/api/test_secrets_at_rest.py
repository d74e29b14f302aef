"""Secrets at rest, end to end, on both backends through a real ``plinth serve`` process.

- **The canary**: values written through the API are searched for, byte for byte and in every
  base64 alignment (standard and URL-safe) and as hex, in the SQLite file with its WAL and
  shared-memory files, in a ``pg_dump`` of the PostgreSQL database, in ``plinth export``'s file
  and in the server's log output, and are found in none of them, while the same search finds
  them in the ``-reveal`` answer (so it can fail).
- **Rotation**: ``plinth secrets rotate-key`` adds a key and seals everything again with it while
  the server keeps serving; the old key can then be removed.
- **Export and import**: the export carries ciphertext and key ids; ``plinth import`` refuses,
  before writing anything, a target whose keys lack one of them.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from plinth.sealing.keys import generate_key, key_file_text, read_key_file
from tests.api.authz_support import ok
from tests.api.conftest import BACKENDS
from tests.support import pg
from tests.support.server import ServerProcess, start_server

ORG = "acme"
SECRETS = f"/org/{ORG}/secret"
CLI_TIMEOUT_S = 60


def plinth(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    environ.update(env or {})
    argv = [sys.executable, "-m", "plinth", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=environ, timeout=CLI_TIMEOUT_S, check=False)


def succeeds(*args: str, env: dict[str, str] | None = None) -> str:
    done = plinth(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def forms(value: bytes) -> list[bytes]:
    """``value`` as it may appear: raw, hex, and base64 (standard and URL-safe) at each of the
    three alignments it can have inside a longer base64 text (only the characters that encode
    ``value``'s bits alone, so a match means the value is there)."""
    found = [value, value.hex().encode()]
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * offset + value + b"\0\0")
            first = -(-offset * 8 // 6)  # ceil: the first character of value's bits alone
            last = (offset + len(value)) * 8 // 6  # the first character past them
            found.append(text[first:last])
    return found


def holds(blob: bytes, value: bytes) -> bool:
    return any(form in blob for form in forms(value))


def test_the_search_finds_every_form() -> None:
    value = b"plinth-canary"
    for offset in range(3):
        wrapped = base64.b64encode(b"x" * offset + value + b"yz")
        assert holds(wrapped, value) and holds(base64.urlsafe_b64encode(b"q" * offset + value), value)
    assert holds(b"..." + value.hex().encode(), value) and not holds(b"plinth-canar", value)


@dataclass
class Store:
    backend: str
    data_dir: Path
    database_url: str | None
    key_file: Path

    def store_args(self) -> list[str]:
        if self.database_url:
            return ["--database-url", self.database_url, "--data-dir", str(self.data_dir)]
        return ["--data-dir", str(self.data_dir)]

    def start(self) -> ServerProcess:
        args = ("--secrets-key-file", str(self.key_file)) if self.database_url else ()
        return start_server(self.data_dir, self.database_url, org=ORG, extra_args=args)

    def key_args(self) -> list[str]:
        return ["--secrets-key-file", str(self.key_file)]

    def at_rest(self) -> bytes:
        """Every byte the store keeps: the SQLite database with its WAL and shm files, or a
        whole ``pg_dump`` of the PostgreSQL database."""
        if self.database_url is None:
            files = [self.data_dir / name for name in ("plinth.db", "plinth.db-wal", "plinth.db-shm")]
            return b"".join(path.read_bytes() for path in files if path.exists())
        return subprocess.run(["pg_dump", self.database_url], capture_output=True, check=True, timeout=60).stdout


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store; on PostgreSQL with a key file the test writes (SQLite makes its own)."""
    data_dir = tmp_path / "data"
    if request.param == "postgres":
        url = pg.create_database()
        key_file = tmp_path / "secrets.key"
        key_file.write_text(key_file_text([generate_key()]))
        try:
            yield Store("postgres", data_dir, url, key_file)
        finally:
            pg.drop_database(url)
    else:
        yield Store("sqlite", data_dir, None, data_dir / "secrets.key")


CANARIES = {name: f"CANARY-{name}-4f9c1e7a".encode() for name in ("first", "second", "refused", "bytes")}


def _write_canaries(api: httpx.Client) -> None:
    first, second = CANARIES["first"].decode(), CANARIES["second"].decode()
    bodies = [
        {"name": "db", "type": "userpass", "data": {"username": "ada", "password": first}},
        {"name": "env", "type": "dictionary", "data": {"TOKEN": first, "OTHER": "x"}},
        {"name": "note", "type": "opaque", "data": {"payload": first, "encoding": "plain"}},
        {
            "name": "blob",
            "type": "opaque",
            "data": {"payload": base64.b64encode(b"\x01" + CANARIES["bytes"]).decode(), "encoding": "base64"},
        },
        {"name": "pull", "type": "docker", "data": json.dumps({"auths": {"r.example.com": {"auth": first}}})},
    ]
    for body in bodies:
        ok(api.post(SECRETS, json=body), 201)
    ok(api.patch(f"{SECRETS}/db", json={"data": {"password": second}}))
    ok(api.patch(f"{SECRETS}/env", json={"data": {"TOKEN": second}}))
    ok(api.put(f"{SECRETS}/note", json={"name": "note", "type": "opaque", "data": {"payload": second}}))
    refused = api.post(SECRETS, json={"name": "bad", "type": "tls", "data": {"cert": CANARIES["refused"].decode()}})
    assert refused.status_code == 400 and not holds(refused.content, CANARIES["refused"])
    refused = api.patch(f"{SECRETS}/db", json={"data": {"password": 7, "extra": CANARIES["refused"].decode()}})
    assert refused.status_code == 400 and not holds(refused.content, CANARIES["refused"])


def test_no_value_reaches_the_store_the_export_or_the_log(store: Store) -> None:
    server = store.start()
    try:
        with server.client() as api:
            _write_canaries(api)
            revealed = b"".join(api.get(f"{SECRETS}/{name}/-reveal").content for name in ("db", "env", "blob", "pull"))
            assert holds(revealed, CANARIES["second"]) and holds(revealed, CANARIES["first"])
            assert holds(revealed, CANARIES["bytes"]), "the base64 payload, found by the base64 search"
            served = b"".join(
                api.get(path).content
                for path in (SECRETS, f"{SECRETS}/db", f"{SECRETS}/db/-eventlog", f"{SECRETS}/note/-accessreport")
            )
            assert not any(holds(served, value) for value in CANARIES.values())
        running = store.at_rest()
    finally:
        server.stop()
    export = store.data_dir.parent / "export.jsonl"
    succeeds("export", *store.store_args(), "--output", str(export))
    exported = export.read_bytes()
    assert b'"kind":"secret.sealed"' in exported and b'"kid":' in exported
    for where, blob in {
        "the store, running": running,
        "the store, stopped": store.at_rest(),
        "the export": exported,
        "the server's log": server.log_path.read_bytes(),
    }.items():
        for name, value in CANARIES.items():
            assert not holds(blob, value), f"the {name} value is in {where}"
    assert f"{SECRETS}/db".encode() in server.log_path.read_bytes(), "the log recorded the requests searched for"


def _sealed_kids(store: Store) -> list[str]:
    """The key id of every sealed record, read from the tables directly."""
    query = "SELECT doc FROM resources WHERE kind = 'secret.sealed'"
    if store.database_url is None:
        conn = sqlite3.connect(store.data_dir / "plinth.db")
        try:
            rows = conn.execute(query).fetchall()
        finally:
            conn.close()
    else:
        import psycopg

        with psycopg.connect(store.database_url) as conn:
            rows = conn.execute(query.replace("doc FROM", "doc::text FROM")).fetchall()
    return [json.loads(doc)["sealed"]["kid"] for (doc,) in rows]


def test_rotation_seals_everything_again_while_the_server_serves(store: Store) -> None:
    server = store.start()
    try:
        with server.client() as api:
            for i in range(3):
                ok(api.post(SECRETS, json={"name": f"s{i}", "type": "opaque", "data": {"payload": f"v{i}"}}), 201)
            (old,) = read_key_file(store.key_file).kids
            assert set(_sealed_kids(store)) == {old}
            out = succeeds("secrets", "rotate-key", *store.store_args(), *store.key_args())
            ring = read_key_file(store.key_file)
            new = ring.newest.kid
            assert ring.kids == (old, new) and f"Added key {new}" in out and "Sealed 3 values again" in out
            assert oct(store.key_file.stat().st_mode & 0o777) == "0o600"
            assert _sealed_kids(store) == [new] * 3
            # The running server opens what the new key sealed, and seals with it from now on.
            assert [ok(api.get(f"{SECRETS}/s{i}/-reveal"))["data"]["payload"] for i in range(3)] == ["v0", "v1", "v2"]
            ok(api.patch(f"{SECRETS}/s0", json={"data": {"payload": "after"}}))
            ok(api.post(SECRETS, json={"name": "s3", "type": "opaque", "data": {"payload": "v3"}}), 201)
            assert set(_sealed_kids(store)) == {new}
            status = succeeds("secrets", "status", *store.store_args(), *store.key_args())
            assert f"{new}: 4 values (newest" in status and "Unused, may be removed" in status and old in status
            # Once nothing uses it, the old key goes; everything still opens.
            store.key_file.write_text(key_file_text([ring.newest]))
            assert ok(api.get(f"{SECRETS}/s0/-reveal"))["data"]["payload"] == "after"
            assert "Sealed 0 values again" in succeeds("secrets", "reseal", *store.store_args(), *store.key_args())
    finally:
        server.stop()
    restarted = store.start()
    try:
        with restarted.client() as api:
            assert ok(api.get(f"{SECRETS}/s3/-reveal"))["data"]["payload"] == "v3"
    finally:
        restarted.stop()


def _stored_by_a_server(store: Store, body: dict[str, object]) -> ServerProcess:
    """Start a server on ``store``, create one secret through it, stop it; the stopped server."""
    server = store.start()
    try:
        with server.client() as api:
            ok(api.post(SECRETS, json=body), 201)
    finally:
        server.stop()
    return server


def test_status_names_a_key_the_source_lacks(store: Store, tmp_path: Path) -> None:
    _stored_by_a_server(store, {"name": "kept", "type": "opaque", "data": {"payload": "v"}})
    (kid,) = read_key_file(store.key_file).kids
    other = tmp_path / "other.key"
    other.write_text(key_file_text([generate_key()]))
    done = plinth("secrets", "status", *store.store_args(), "--secrets-key-file", str(other))
    assert done.returncode == 1 and f"{kid}: 1 values, and the key source does not hold this key!" in done.stdout


def test_an_import_needs_the_keys_its_secrets_are_sealed_with(store: Store, tmp_path: Path) -> None:
    server = _stored_by_a_server(store, {"name": "moved", "type": "dictionary", "data": {"K": "moved-value"}})
    export = tmp_path / "export.jsonl"
    succeeds("export", *store.store_args(), "--output", str(export))
    (kid,) = read_key_file(store.key_file).kids

    target = tmp_path / "target"
    refused = plinth("import", str(export), "--data-dir", str(target))
    assert refused.returncode == 1 and kid in refused.stderr and "--secrets-key-file" in refused.stderr
    assert not (target / "plinth.db").exists(), "nothing was written"
    wrong = tmp_path / "wrong.key"
    wrong.write_text(key_file_text([generate_key()]))
    refused = plinth("import", str(export), "--data-dir", str(target), "--secrets-key-file", str(wrong))
    assert refused.returncode == 1 and f"lacks {kid}" in refused.stderr
    assert not (target / "plinth.db").exists()

    succeeds("import", str(export), "--data-dir", str(target), "--secrets-key-file", str(store.key_file))
    moved = start_server(target, org=ORG, extra_args=("--secrets-key-file", str(store.key_file)))
    try:
        with moved.client(server.key) as api:
            assert ok(api.get(f"{SECRETS}/moved/-reveal"))["data"] == {"K": "moved-value"}
    finally:
        moved.stop()
