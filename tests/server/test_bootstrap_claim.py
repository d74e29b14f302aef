"""The first-start claim: one process bootstraps, and a claim left by a process killed before it
finished is taken over after the lease, on both backends (the store is real; the kill is the
state it leaves: a claim, maybe part of the work, and no ``bootstrap.org``)."""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from plinth.auth.authn import KeyAuthenticator
from plinth.auth.generation import GenerationWatcher
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.kinds import REGISTRY
from plinth.sealing import KeyRing, Sealer, StaticKeys, generate_key
from plinth.server import bootstrap as first_start
from plinth.storage import open_storage
from plinth.storage.base import Key, SetMeta, Storage
from tests.aio import RunAsync
from tests.support.server import start_server

#: The server's secrets key: it seals the signing key the bootstrap makes.
SEALER = Sealer(StaticKeys(KeyRing((generate_key(),))))


def claim_made(seconds_ago: float) -> SetMeta:
    return SetMeta(first_start.CLAIM_META, f"someone {time.time() - seconds_ago:.3f}")


async def admin_keys(storage: Storage) -> list[object]:
    record = await storage.get(Key("acme", "serviceaccount", "", first_start.ADMIN))
    assert record is not None
    return list(orjson.loads(record.doc)["keys"])


async def is_server_admin(storage: Storage, key: str) -> bool:
    principal = await KeyAuthenticator(storage, GenerationWatcher(storage)).authenticate(key)
    return principal is not None and principal.server_admin


def test_a_claim_left_by_a_killed_bootstrap_is_taken_over_after_the_lease(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        engine = Engine(store, REGISTRY, sealer=SEALER)
        # What a process killed half-way leaves: its claim, the org and some built-ins.
        await store.commit([claim_made(first_start.CLAIM_LEASE_S + 5)])
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        await first_start.seed_org(engine, "acme")
        key = await first_start.bootstrap(engine, store, "acme")
        assert key is not None and await is_server_admin(store, key)
        assert await store.get_meta(first_start.ORG_META) == "acme"
        assert len(await admin_keys(store)) == 1

    run_async(scenario())


def test_a_recent_claim_is_left_to_its_claimer(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        await store.commit([claim_made(1)])  # another process may be bootstrapping right now
        assert await first_start.bootstrap(Engine(store, REGISTRY, sealer=SEALER), store, "acme") is None
        assert await store.get_meta(first_start.ORG_META) is None

    run_async(scenario())


def test_a_finished_bootstrap_is_never_taken_over_however_old(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        engine = Engine(store, REGISTRY, sealer=SEALER)
        key = await first_start.bootstrap(engine, store, "acme")
        assert key is not None
        await store.commit([SetMeta(first_start.CLAIM_META, "first 1000.000")])  # made long ago
        assert await first_start.bootstrap(engine, store, "acme") is None
        assert len(await admin_keys(store)) == 1 and await is_server_admin(store, key)

    run_async(scenario())


def test_a_claim_without_a_time_counts_as_expired(store: Storage, run_async: RunAsync) -> None:
    """Claims made before claims carried their time are only a token."""

    async def scenario() -> None:
        await store.commit([SetMeta(first_start.CLAIM_META, "0123456789abcdef")])
        key = await first_start.bootstrap(Engine(store, REGISTRY, sealer=SEALER), store, "acme")
        assert key is not None and await is_server_admin(store, key)

    run_async(scenario())


def test_serve_on_a_store_a_killed_start_left_prints_a_working_key(tmp_path: Path, run_async: RunAsync) -> None:
    data = tmp_path / "data"

    async def leave_a_dead_claim() -> None:
        storage = await open_storage(None, data)
        try:
            await storage.commit([claim_made(first_start.CLAIM_LEASE_S + 5)])
        finally:
            await storage.close()

    run_async(leave_a_dead_claim())
    server = start_server(data)
    try:
        assert server.key and "Admin key (shown once" in server.log_path.read_text()
        with server.client() as api:
            assert api.get("/org/acme").status_code == 200
            assert api.post("/org/acme/gvc", json={"name": "after-takeover"}).status_code == 201
    finally:
        server.stop()
