"""Stateful workloads against real podman: stable replica names started in order, and each
replica's volume-set volume its own, kept across a restart and a template update, removed by
the volume keeper once the volume set is gone. Volumes carry the test run's label, so the session's clean-up finds
any a failing test leaves."""

from __future__ import annotations

from typing import Any

from plinth.runtime.containers import CliEngine
from plinth.runtime.controller import REPLICA, reconcile
from plinth.runtime.controller.plan import VOLUME_SET, volume_name
from plinth.runtime.controller.volumes import VolumeKeeper, remove_volume_set
from tests.aio import RunAsync
from tests.runtime.controller.conftest import LOCATION, World


def _stateful(world: World, env: str = "one") -> dict[str, Any]:
    doc = world.workload("vsdb", type_="stateful", replicas=2)
    container = doc["spec"]["containers"][0]
    container["volumes"] = [{"uri": "cpln://volumeset/data", "path": "/data"}]
    container["env"] = [{"name": "GENERATION", "value": env}]
    return doc


def _sh(run_async: RunAsync, engine: CliEngine, name: str, script: str) -> str:
    result = run_async(engine.exec(name, ["sh", "-c", script]))
    assert result.exit_code == 0, result.stderr
    return bytes(result.stdout).decode().strip()


def test_stateful_replicas_keep_their_own_volume_until_the_volume_set_goes(
    run_async: RunAsync, engine: CliEngine, world: World
) -> None:
    doc = _stateful(world)
    scope = world.scope
    try:
        report = world.sync(run_async, engine, doc)
        by_replica = {i.labels[REPLICA]: i.name for i in run_async(engine.list(scope))}
        assert sorted(by_replica) == ["vsdb-0", "vsdb-1"]
        assert report.created == [by_replica["vsdb-0"], by_replica["vsdb-1"]]  # replica 0 first
        expected = [volume_name(world.org, "main", LOCATION, "data", i) for i in (0, 1)]
        assert list(run_async(engine.list_volumes({**scope, VOLUME_SET: "data"}))) == expected
        for replica in ("vsdb-0", "vsdb-1"):
            _sh(run_async, engine, by_replica[replica], f"echo {replica} > /data/who")

        # A template update replaces each replica in place, under the same name, on its volume.
        world.sync(run_async, engine, _stateful(world, env="two"))
        after = {i.labels[REPLICA]: i for i in run_async(engine.list(scope))}
        assert {r: i.name for r, i in after.items()} == by_replica
        for replica, info in after.items():
            assert _sh(run_async, engine, info.name, "cat /data/who; echo $GENERATION") == f"{replica}\ntwo"

        # A restart (the container removed behind the controller's back) keeps it too.
        run_async(engine.remove(by_replica["vsdb-1"]))
        world.sync(run_async, engine, _stateful(world, env="two"))
        assert _sh(run_async, engine, by_replica["vsdb-1"], "cat /data/who") == "vsdb-1"

        # The workload goes, the volumes stay while the volume set exists; it goes, so do they.
        keeper = VolumeKeeper()
        keeper.planned(world.desired(doc))
        run_async(reconcile([], engine, scope=scope))
        assert run_async(keeper.collect(engine, world.org, scope, {("main", "data")})) == {}
        assert list(run_async(engine.list_volumes({**scope, VOLUME_SET: "data"}))) == expected
        assert run_async(keeper.collect(engine, world.org, scope, set())) == {}
        assert list(run_async(engine.list_volumes({**scope, VOLUME_SET: "data"}))) == []
        assert keeper.known == set()
    finally:
        run_async(reconcile([], engine, scope=scope))
        run_async(remove_volume_set(engine, world.org, "main", "data", scope))
