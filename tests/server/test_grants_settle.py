"""The grants extension's settle of a workload's own status after its commit (``engine/grants.py``).

A workload's status says whether its identity may reveal the secrets it references, answered
from the org's policies before the commit. A policy written by another process between that
answer and the commit settles the statuses of the items it targets, which do not include the
workload yet: the workload's own settle after its commit is what makes its status right. It is
needed only when the access generation moved after the answers were read; otherwise the stored
status already holds and the settle is skipped (docs/write-path.md, fifth round).

On both backends, through the engine the server runs."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest

from plinth.engine.address import Address
from plinth.engine.extensions import Extension, ExtensionHost, WriteChange
from plinth.engine.grants import Grants
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.engine.standard import standard_extensions
from plinth.kinds import REGISTRY
from plinth.sealing import KeyRing, Sealer, StaticKeys, generate_key
from plinth.storage.base import Operation, Storage
from tests.aio import RunAsync

ORG = "granting"
WORKLOAD = {
    "name": "app",
    "spec": {
        "identityLink": f"/org/{ORG}/gvc/prod/identity/app",
        "containers": [
            {"name": "main", "image": "nginx", "env": [{"name": "PASSWORD", "value": "cpln://secret/db.payload"}]}
        ],
    },
}
REVEAL = {
    "name": "reveal-db",
    "targetKind": "secret",
    "targetLinks": [f"/org/{ORG}/secret/db"],
    "bindings": [{"permissions": ["reveal"], "principalLinks": [f"/org/{ORG}/gvc/prod/identity/app"]}],
}


class PolicyFromElsewhere(Extension):
    """Before the commit of a workload, once: another process (an engine of its own, with its
    own policy caches) writes the policy that lets the workload's identity reveal its secret."""

    other: Engine | None = None

    def __init__(self, host: ExtensionHost) -> None:
        pass

    async def before_commit(self, change: WriteChange) -> list[Operation]:
        if change.kind.name == "workload" and self.other is not None:
            other, PolicyFromElsewhere.other = self.other, None
            await other.create(RequestInfo(kind="policy", org=ORG), dict(REVEAL))
        return []


async def _prepared(store: Storage, extra: list[Any]) -> Engine:
    sealer = Sealer(StaticKeys(KeyRing((generate_key(),))))
    engine = Engine(store, REGISTRY, sealer=sealer, extensions=[*standard_extensions(), *extra])
    await engine.upsert(RequestInfo(kind="org"), {"name": ORG})
    await engine.create(RequestInfo(kind="gvc", org=ORG), {"name": "prod"})
    await engine.create(RequestInfo(kind="identity", org=ORG, gvc="prod"), {"name": "app"})
    await engine.create(RequestInfo(kind="secret", org=ORG), {"name": "db", "type": "opaque", "data": {"payload": "x"}})
    return engine


async def _warning(store: Storage) -> str | None:
    record = await store.get(Address(REGISTRY["workload"], ORG, "prod", "app").key)
    assert record is not None
    return orjson.loads(record.doc)["status"].get("warning")


def _counting_settles(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    grants = engine.extensions.find(Grants)
    settled: list[str] = []
    host = grants._host
    original = host.settle_own

    async def counted(*args: Any) -> None:
        settled.append(args[3])
        await original(*args)

    monkeypatch.setattr(grants, "_host", dataclasses.replace(host, settle_own=counted))
    return settled


def test_a_policy_written_elsewhere_before_the_commit_reaches_the_workloads_status(
    store: Storage, run_async: RunAsync, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        engine = await _prepared(store, [PolicyFromElsewhere])
        settled = _counting_settles(engine, monkeypatch)
        PolicyFromElsewhere.other = Engine(store, REGISTRY)
        await engine.create(RequestInfo(kind="workload", org=ORG, gvc="prod"), WORKLOAD)
        assert PolicyFromElsewhere.other is None  # the policy was written between status and commit
        assert settled == [f"/org/{ORG}/gvc/prod/workload/app"]
        assert await _warning(store) is None

    run_async(scenario())


def test_without_a_policy_written_meanwhile_the_status_is_not_computed_again(
    store: Storage, run_async: RunAsync, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        engine = await _prepared(store, [])
        settled = _counting_settles(engine, monkeypatch)
        await engine.create(RequestInfo(kind="workload", org=ORG, gvc="prod"), WORKLOAD)
        assert settled == []
        assert "may not reveal secret 'db'" in (await _warning(store) or "")
        # A policy written through this engine settles the workload as its target's dependant.
        await engine.create(RequestInfo(kind="policy", org=ORG), dict(REVEAL))
        assert await _warning(store) is None
        # And the workload's next write asks under the new generation: nothing to settle again.
        await engine.patch(RequestInfo(kind="workload", org=ORG, gvc="prod", name="app"), {"description": "x"})
        assert settled == []
        assert await _warning(store) is None

    run_async(scenario())
