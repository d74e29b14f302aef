"""A stolen store mints nothing (issue 21, defect 2).

The probe copied ``plinth.db``, read the key-signing private key from it, minted a server-admin
key and revealed secrets. The signing keys are now sealed with the secrets key, like secrets
(``auth/signing.py``): the store, a backup or a ``pg_dump`` alone holds no private key material,
and a server given the store without its secrets key refuses to start, saying why. A store from
before sealing is sealed in place at start, and keys it signed keep working. Both backends.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import psycopg
import pytest
from cryptography.hazmat.primitives import serialization

from plinth.auth.signing import CURRENT, PREFIX, SigningKeyError, context, load_key
from plinth.sealing import Sealer, StaticKeys, generate_key, open_keys
from plinth.sealing.keys import KeyRing, parse_key
from plinth.storage import open_storage
from tests.api.authz_support import server_signing_key
from tests.support import pg
from tests.support.server import TEST_SECRETS_KEY, ServerProcess, start_server

OTHER_KEY = base64.b64encode(generate_key().material).decode()


@dataclass
class Store:
    backend: str
    data_dir: Path
    database_url: str | None

    def start(self, secrets_key: str | None = None) -> ServerProcess:
        return start_server(self.data_dir, self.database_url, secrets_key=secrets_key)

    def meta(self) -> dict[str, str]:
        """The meta table, read straight from the database (as a thief would)."""
        if self.database_url:
            with psycopg.connect(self.database_url) as conn:
                return dict(conn.execute("SELECT name, value FROM meta").fetchall())
        with sqlite3.connect(self.data_dir / "plinth.db") as conn:
            return dict(conn.execute("SELECT name, value FROM meta").fetchall())

    def write_meta(self, name: str, value: str) -> None:
        if self.database_url:
            with psycopg.connect(self.database_url) as conn:
                conn.execute("UPDATE meta SET value = %s WHERE name = %s", (value, name))
            return
        with sqlite3.connect(self.data_dir / "plinth.db") as conn:
            conn.execute("UPDATE meta SET value = ? WHERE name = ?", (value, name))

    def sealer(self) -> Sealer:
        opened = open_keys(None, TEST_SECRETS_KEY if self.database_url else None, self.data_dir, False, generate=False)
        assert opened is not None
        return Sealer(opened.source)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        url = pg.create_database(str(request.getfixturevalue("pg_url")))
        try:
            yield Store("postgres", tmp_path / "data", url)
        finally:
            pg.drop_database(url)
    else:
        yield Store("sqlite", tmp_path / "data", None)


def _private_forms(store: Store, server: ServerProcess) -> list[bytes]:
    """The current signing key's private key in every form a careless store could hold it."""
    private = server_signing_key(server).private
    raw = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    body = b"".join(pem.splitlines()[1:-1])
    return [raw, raw.hex().encode(), base64.b64encode(raw), body]


def test_the_store_holds_no_signing_key_in_the_clear(store: Store) -> None:
    server = store.start()
    try:
        with server.client() as api:  # a second key pair: a rotation is not needed to see one
            assert api.post("/org/acme/serviceaccount", json={"name": "robot"}).status_code == 201
        forms = _private_forms(store, server)
    finally:
        server.stop()
    entries = {name: value for name, value in store.meta().items() if name.startswith(PREFIX)}
    assert entries, "the store has a signing key"
    for name, value in entries.items():
        doc = orjson.loads(value)
        assert "private" not in doc and "PRIVATE KEY" not in value, name
        assert doc["sealed"]["alg"] == "A256GCM", name
        assert not any(form in value.encode() for form in forms), name
    if store.backend == "sqlite":  # nor anywhere in the file (the WAL was checkpointed at close)
        image = b"".join(p.read_bytes() for p in store.data_dir.glob("plinth.db*") if p.is_file())
        assert not any(form in image for form in forms)


def test_the_stolen_store_alone_cannot_open_a_signing_key(store: Store) -> None:
    server = store.start()
    server.stop()

    async def steal() -> None:
        storage = await open_storage(store.database_url, store.data_dir)
        try:
            kid = await storage.get_meta(CURRENT)
            assert kid is not None
            with pytest.raises(SigningKeyError, match="cannot open signing key"):
                await load_key(storage, None, kid)  # no secrets key
            other = Sealer(StaticKeys(KeyRing((parse_key(OTHER_KEY, "test"),))))
            with pytest.raises(SigningKeyError, match="which the server's keys do not hold"):
                await load_key(storage, other, kid)  # a key of the thief's own
        finally:
            await storage.close()

    asyncio.run(steal())


def test_a_server_on_a_copied_store_without_its_secrets_key_refuses_to_start(store: Store, tmp_path: Path) -> None:
    server = store.start()
    server.stop()
    if store.backend == "sqlite":
        thief = tmp_path / "thief"
        thief.mkdir()
        shutil.copy(store.data_dir / "plinth.db", thief / "plinth.db")  # no secrets.key beside it
        stolen = Store("sqlite", thief, None)
        with pytest.raises(RuntimeError, match=r"cannot start: cannot open signing key .* secrets key id"):
            stolen.start()
    else:  # a replica (or a thief holding a pg_dump) started with another secrets key
        with pytest.raises(RuntimeError, match=r"cannot start: cannot open signing key .* secrets key id"):
            store.start(secrets_key=OTHER_KEY)


def test_clear_signing_keys_of_an_older_store_are_sealed_at_start_and_keep_verifying(store: Store) -> None:
    server = store.start()
    admin_key = server.key
    try:
        signing = server_signing_key(server)
    finally:
        server.stop()
    # The store as an older Plinth left it: the private key in the clear, in PEM.
    name = PREFIX + signing.kid
    doc = orjson.loads(store.meta()[name])
    pem = store.sealer().unseal(doc.pop("sealed"), context(signing.kid)).decode()
    store.write_meta(name, orjson.dumps({**doc, "private": pem}).decode())
    assert "PRIVATE KEY" in store.meta()[name]

    server = store.start()
    try:
        sealed = orjson.loads(store.meta()[name])
        assert "private" not in sealed and sealed["sealed"]["kid"] == store.sealer().newest_kid
        with server.client(admin_key) as api:  # signed before, by the key now sealed: still good
            assert api.get("/org/acme").status_code == 200
            assert api.post("/org/acme/serviceaccount", json={"name": "robot"}).status_code == 201
            minted = api.post("/org/acme/serviceaccount/robot/-addKey", json={"description": "after"})
            assert minted.status_code == 201, minted.text
        with server.client(minted.json()["key"]) as robot:  # signed by the sealed key: accepted (not 401),
            # holding nothing: the org answers as a missing one (docs/api.md, "Errors")
            assert robot.get("/org/acme").status_code == 404
    finally:
        server.stop()
