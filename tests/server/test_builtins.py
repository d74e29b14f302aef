"""Built-ins of existing stores: every org gets the catalog's locations and every served kind's
policies at server start, once (a fingerprint makes the next starts one meta read), without
touching what clients changed; and a GVC stored before locations were served keeps working.
On both backends, through the engine the server runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson
import pytest

from plinth.engine.quotas import Quotas, quotas_extension
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.engine.standard import standard_extensions
from plinth.errors import ValidationFailed
from plinth.kinds import REGISTRY
from plinth.kinds.base import Reference
from plinth.kinds.location import BUILTIN_LOCATIONS
from plinth.kinds.quota import QUOTAS, QuotaDefinition
from plinth.server import bootstrap as first_start
from plinth.storage.base import Key, SetMeta, Storage
from plinth.storage.query import ListRequest
from tests.aio import RunAsync


async def names(storage: Storage, org: str, kind: str) -> set[str]:
    return {r.key.name for r in await storage.list_page(ListRequest(org, kind, "", 1000))}


async def doc(storage: Storage, org: str, kind: str, name: str, parent: str = "") -> dict[str, Any]:
    record = await storage.get(Key(org, kind, parent, name))
    assert record is not None
    return orjson.loads(record.doc)  # type: ignore[no-any-return]


class CountingStorage:
    """The store, counting the calls made to it."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.calls.append(name)
        return getattr(self._storage, name)


def test_an_existing_org_gets_the_catalog_once_and_keeps_what_clients_changed(
    store: Storage, run_async: RunAsync
) -> None:
    async def scenario() -> None:
        engine = Engine(store, REGISTRY)
        # An org from before locations were served: no locations, no location policies.
        await engine.upsert(RequestInfo(kind="org"), {"name": "old"})
        assert await names(store, "old", "location") == set()
        await first_start.ensure_builtins(engine, store)
        assert await names(store, "old", "location") == set(BUILTIN_LOCATIONS)
        assert {"superusers-location", "viewers-location", "superusers-gvc"} <= await names(store, "old", "policy")
        seeded = await doc(store, "old", "location", "aws-us-east-1")
        assert (seeded["origin"], seeded["provider"], seeded["region"], seeded["version"]) == (
            "builtin",
            "aws",
            "us-east-1",
            1,
        )
        # A client disables one; a newer catalog (another fingerprint) seeds again, and leaves it.
        await engine.patch(RequestInfo(kind="location", org="old", name="aws-us-east-1"), {"spec": {"enabled": False}})
        await store.commit([SetMeta(first_start.BUILTINS_META, "an older catalog")])
        await first_start.ensure_builtins(engine, store)
        kept = await doc(store, "old", "location", "aws-us-east-1")
        assert kept["spec"] == {"enabled": False} and kept["version"] == 2
        # Up to date: the next start reads one meta value and nothing else.
        counting = CountingStorage(store)
        await first_start.ensure_builtins(Engine(counting, REGISTRY), counting)  # type: ignore[arg-type]
        assert counting.calls == ["get_meta"]

    run_async(scenario())


def test_seeding_twice_creates_nothing_more(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        engine = Engine(store, REGISTRY)
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        await first_start.seed_org(engine, "acme")
        first = {n: (await doc(store, "acme", "location", n))["version"] for n in ("aws-us-east-1", "gcp-us-east1")}
        assert await engine.create_missing("location", "acme", first_start.builtin_locations()) == 0
        again = {n: (await doc(store, "acme", "location", n))["version"] for n in first}
        assert first == again == {"aws-us-east-1": 1, "gcp-us-east1": 1}

    run_async(scenario())


def test_a_gvc_stored_before_locations_were_served_keeps_working(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        # The GVC is written as the server did before: locations need not exist.
        def lenient(item: dict[str, Any], org: str) -> list[Reference]:
            return [replace(ref, must_exist=False) for ref in REGISTRY["gvc"].rules.references(item, org)]

        before = Engine(
            store,
            {**REGISTRY, "gvc": replace(REGISTRY["gvc"], rules=replace(REGISTRY["gvc"].rules, references=lenient))},
        )
        await before.upsert(RequestInfo(kind="org"), {"name": "acme"})
        placement = {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1", "//location/mars-north-1"]}}
        await before.create(RequestInfo(kind="gvc", org="acme"), {"name": "legacy", "spec": placement})

        engine = Engine(store, REGISTRY)
        await first_start.ensure_builtins(engine, store)
        gvc = orjson.loads(await engine.get(RequestInfo(kind="gvc", org="acme", name="legacy")))
        assert gvc["spec"]["staticPlacement"]["locationLinks"][1] == "/org/acme/location/mars-north-1"
        # What lives in it is placed where it always was.
        volumeset = {"name": "data", "spec": {"initialCapacity": 10}}
        created = await engine.create(RequestInfo(kind="volumeset", org="acme", gvc="legacy"), volumeset)
        status = orjson.loads(created.doc)["status"]
        assert [loc["name"] for loc in status["locations"]] == ["aws-us-east-1", "mars-north-1"]
        # Its next write is checked.
        with pytest.raises(ValidationFailed) as refused:
            await engine.patch(RequestInfo(kind="gvc", org="acme", name="legacy"), {"description": "touched"})
        assert [e.path for e in refused.value.errors] == ["spec.staticPlacement.locationLinks[1]"]

    run_async(scenario())


def test_quotas_an_older_server_did_not_keep_are_seeded_with_what_they_count(
    store: Storage, run_async: RunAsync
) -> None:
    async def scenario() -> None:
        without_quotas = {name: kind for name, kind in REGISTRY.items() if name != "quota"}
        before = Engine(store, without_quotas)
        await before.upsert(RequestInfo(kind="org"), {"name": "early"})
        await before.create(RequestInfo(kind="gvc", org="early"), {"name": "prod"})
        for name in ("wa", "wb"):
            body = {"name": name, "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
            await before.create(RequestInfo(kind="workload", org="early", gvc="prod"), body)
        await before.create(RequestInfo(kind="domain", org="early"), {"name": "early.example.com"})
        assert await names(store, "early", "quota") == set()

        engine = Engine(store, REGISTRY)
        await first_start.ensure_builtins(engine, store)
        seeded = {
            (q["name"], q["dimensions"].get("gvc"), q["current"])
            for q in [orjson.loads(r.doc) for r in await store.list_page(ListRequest("early", "quota", "", 100))]
        }
        assert seeded == {
            ("agents", None, 0),
            ("domains", None, 1),
            ("identities-per-gvc", "prod", 0),
            ("workloads-per-gvc", "prod", 2),
        }
        # From now on the engine counts: one more workload is one more unit.
        body = {"name": "wc", "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
        await engine.create(RequestInfo(kind="workload", org="early", gvc="prod"), body)
        workloads = [orjson.loads(r.doc) for r in await store.list_page(ListRequest("early", "quota", "", 100))]
        assert [q["current"] for q in workloads if q["name"] == "workloads-per-gvc"] == [3]
        assert await engine.extensions.find(Quotas).ensure("early", engine.clock()) == 0

    run_async(scenario())


def test_a_quota_added_for_a_kind_already_served_is_seeded_in_an_existing_store(
    store: Storage, run_async: RunAsync
) -> None:
    async def scenario() -> None:
        # A store seeded by a server enforcing the standard quota list.
        before = Engine(store, REGISTRY)
        await before.upsert(RequestInfo(kind="org"), {"name": "grown"})
        await first_start.ensure_builtins(before, store)
        await before.create(RequestInfo(kind="serviceaccount", org="grown"), {"name": "robot"})
        assert "service-accounts" not in {q["name"] for q in await quota_docs(store, "grown")}

        # A newer server limits service accounts too: kinds and catalog are unchanged, the quota list is not.
        accounts = QuotaDefinition("service-accounts", "serviceaccount", None, 500, "accounts", "Max service accounts")
        newer = Engine(store, REGISTRY, extensions=[quotas_extension((*QUOTAS, accounts)), *standard_extensions()[1:]])
        await first_start.ensure_builtins(newer, store)
        seeded = {q["name"]: q["current"] for q in await quota_docs(store, "grown")}
        assert seeded["service-accounts"] == 1

    run_async(scenario())


async def quota_docs(storage: Storage, org: str) -> list[dict[str, Any]]:
    return [orjson.loads(r.doc) for r in await storage.list_page(ListRequest(org, "quota", "", 100))]
