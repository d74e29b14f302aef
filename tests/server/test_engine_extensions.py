"""The engine extension protocol (``engine/extensions.py``): the engine calls every registered
extension's hooks at fixed points of each write, and names no feature itself.

On both backends, through the engine the server runs."""

from __future__ import annotations

from typing import Any

import orjson

from plinth.auth.generation import GenerationWatcher
from plinth.auth.policy import PolicySet
from plinth.engine.access import AccessControl
from plinth.engine.extensions import Extension, ExtensionHost, WriteChange
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.engine.standard import standard_extensions
from plinth.kinds import REGISTRY
from plinth.server import bootstrap as first_start
from plinth.storage.base import Operation, SetMeta, Storage
from plinth.storage.query import ListRequest
from tests.aio import RunAsync


class Recorder(Extension):
    """Writes a meta value in each transaction it is asked about, and records every call."""

    def __init__(self, host: ExtensionHost) -> None:
        self.calls: list[tuple[str, str, bool, bool]] = []

    def _note(self, hook: str, change: WriteChange) -> None:
        self.calls.append((hook, change.name, change.created, change.deleted))

    async def before_commit(self, change: WriteChange) -> list[Operation]:
        self._note("before_commit", change)
        return [SetMeta(f"recorded.{change.name}", "deleted" if change.deleted else "written")]

    async def dry_run(self, change: WriteChange) -> None:
        self._note("dry_run", change)

    async def after_commit(self, change: WriteChange) -> None:
        self._note("after_commit", change)


def test_every_write_calls_the_hooks_and_commits_what_they_add(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        engine = Engine(store, REGISTRY, extensions=[*standard_extensions(), Recorder])
        recorder = engine.extensions.find(Recorder)
        await engine.upsert(RequestInfo(kind="org"), {"name": "hooked"})
        recorder.calls.clear()
        info = RequestInfo(kind="gvc", org="hooked")
        await engine.create(info, {"name": "prod"}, dry_run=True)
        assert await store.get_meta("recorded.prod") is None  # a dry run commits nothing
        await engine.create(info, {"name": "prod"})
        assert await store.get_meta("recorded.prod") == "written"
        await engine.patch(RequestInfo(kind="gvc", org="hooked", name="prod"), {"description": "changed"})
        await engine.delete(RequestInfo(kind="gvc", org="hooked", name="prod"))
        assert await store.get_meta("recorded.prod") == "deleted"
        assert recorder.calls == [
            ("dry_run", "prod", True, False),
            ("before_commit", "prod", True, False),
            ("after_commit", "prod", True, False),
            ("before_commit", "prod", False, False),
            ("after_commit", "prod", False, False),
            ("before_commit", "prod", False, True),
            ("after_commit", "prod", False, True),
        ]

    run_async(scenario())


def test_an_engine_without_extensions_keeps_no_quota(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        engine = Engine(store, REGISTRY, extensions=[])
        await engine.upsert(RequestInfo(kind="org"), {"name": "bare"})
        await engine.create(RequestInfo(kind="gvc", org="bare"), {"name": "prod"})
        assert await store.list_page(ListRequest("bare", "quota", "", 10)) == []
        # With them, the GVC's own quotas come with it.
        full = Engine(store, REGISTRY)
        await full.create(RequestInfo(kind="gvc", org="bare"), {"name": "staging"})
        quotas = [orjson.loads(r.doc) for r in await store.list_page(ListRequest("bare", "quota", "", 10))]
        assert {q["dimensions"].get("gvc") for q in quotas} == {"staging"}

    run_async(scenario())


class LocationReads:
    """The store, counting the pages of locations read (what resolving a placement costs)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.pages = 0

    async def list_page(self, request: ListRequest) -> Any:
        self.pages += request.kind == "location"
        return await self._storage.list_page(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)


def test_only_statuses_that_read_placements_resolve_them(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        counting = LocationReads(store)
        engine = Engine(counting, REGISTRY)  # type: ignore[arg-type]
        await engine.upsert(RequestInfo(kind="org"), {"name": "placed"})
        await first_start.ensure_builtins(engine, store)
        query = {
            "kind": "location",
            "spec": {"match": "all", "terms": [{"property": "name", "value": "aws-us-east-1"}]},
        }
        await engine.create(
            RequestInfo(kind="gvc", org="placed"),
            {"name": "prod", "spec": {"staticPlacement": {"locationQuery": query}}},
        )
        # An identity's status does not read where its GVC is placed: no location is read for it.
        counting.pages = 0
        await engine.create(RequestInfo(kind="identity", org="placed", gvc="prod"), {"name": "app"})
        assert counting.pages == 0
        # A volume set's does: its locations are what the GVC's query selects.
        created = await engine.create(
            RequestInfo(kind="volumeset", org="placed", gvc="prod"), {"name": "data", "spec": {"initialCapacity": 10}}
        )
        assert counting.pages > 0
        assert [loc["name"] for loc in orjson.loads(created.doc)["status"]["locations"]] == ["aws-us-east-1"]

    run_async(scenario())


def test_authorization_and_the_grants_extension_share_one_policy_set_cache(store: Storage, run_async: RunAsync) -> None:
    async def scenario() -> None:
        access = AccessControl(store, REGISTRY, GenerationWatcher(store))
        engine = Engine(store, REGISTRY, access_control=access)
        await engine.upsert(RequestInfo(kind="org"), {"name": "shared"})
        await engine.create(RequestInfo(kind="serviceaccount", org="shared"), {"name": "robot"})
        robot, secret = "/org/shared/serviceaccount/robot", "/org/shared/secret/s"

        def grant(policies: PolicySet) -> object:
            return policies.allowed(policies.identities(robot, None), "view", "secret", secret, lambda: None)

        assert grant(await access.cached_policy_set("shared")) is None
        body = {
            "name": "robot-secrets",
            "targetKind": "secret",
            "target": "all",
            "bindings": [{"permissions": ["view"], "principalLinks": [robot]}],
        }
        await engine.create(RequestInfo(kind="policy", org="shared"), body)
        # The engine's policy write expired the cache authorization reads: it sees the policy now.
        assert grant(await access.cached_policy_set("shared")) is not None

    run_async(scenario())
