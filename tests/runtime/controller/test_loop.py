"""The control loop against a real Plinth server and real podman: workloads written through
the public API run, roll, scale and go; a new loop adopts; a missed change (a restarted
server, a 410, a container removed behind the loop's back) is healed.

One server and one loop per store (SQLite, then PostgreSQL); the loop runs on an event loop of its own in
a thread, as it would beside ``plinth serve``, and the tests talk to the server over HTTP.
The org is named after the test run, so engine names never meet another session's, and the
loop's scope carries the session's test-run label, so the finalizer removes what it made.
Every wait is bounded by a deadline; nothing asserts on timing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from plinth.runtime.controller import Informer
from plinth.runtime.controller.reporter import Reporter
from plinth.runtime.gateway import Caddy, RouteTable
from tests.aio import RunAsync
from tests.support.containers import INDEX, ContainerKit, get_when_up, podman
from tests.support.control_loop import (
    LoopThread,
    containers,
    exec_out,
    loop_gateway,
    loop_server,
    running_ids,
    settled,
    until,
    workload_doc,
)
from tests.support.control_loop import database as database  # the module's store, both of them
from tests.support.server import ServerProcess, start_server

KEY = os.urandom(32)  # the loops of this module share it, as restarts of one controller would
LOCATION = "aws-us-east-2"
GVC = "main"
WAIT_S = 60


@pytest.fixture(scope="module")
def server(
    database: str | None, test_containers: ContainerKit, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    # An org per store, so the second store's loop never meets the first one's containers;
    # --no-controller: the test runs its own loop beside the server.
    org = f"t{test_containers.run_id}{'p' if database else 's'}"
    data = tmp_path_factory.mktemp("loop-server")
    with loop_server(data, database, org, GVC, LOCATION, "--runtime", "containers", "--no-controller") as proc:
        yield proc


@pytest.fixture(scope="module")
def gateway(test_containers: ContainerKit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Caddy, str]]:
    with loop_gateway(Path(tmp_path_factory.mktemp("loop-caddy"))) as running:
        yield running


@pytest.fixture(scope="module")
def running(
    server: ServerProcess, test_containers: ContainerKit, gateway: tuple[Caddy, str]
) -> Iterator[list[LoopThread]]:
    """The module's loop, in a list so a test may replace it (the last one is stopped after)."""
    caddy, listen = gateway

    async def apply(table: RouteTable) -> None:
        await caddy.apply(table, listen)

    loops = [LoopThread(server, test_containers, KEY, gateway=apply)]
    yield loops
    loops[-1].stop()


def _env_of(run_async: RunAsync, name: str, variable: str) -> str:
    return exec_out(run_async, name, ["sh", "-c", f'echo "${variable}"'])


def test_a_workload_written_through_the_api_runs_rolls_scales_and_goes(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit, base = test_containers, f"/org/{server.org}/gvc/{GVC}/workload"
    with server.client() as api:
        assert api.post(base, json=workload_doc("web", kit, 2)).status_code == 201
        first = settled(run_async, server, kit, "web", 2)
        infos = containers(run_async, server, kit, "web")
        assert sorted(c.labels["plinth.replica"] for c in infos) == ["web-0", "web-1"]
        assert {c.labels["plinth.location"] for c in infos} == {LOCATION}
        assert get_when_up(infos[0].ports[8080], WAIT_S).content == INDEX

        # A new env value is a new template: both replicas are replaced, and run it.
        patch = {"spec": {"containers": workload_doc("web", kit, 2, env={"COLOUR": "blue"})["spec"]["containers"]}}
        assert api.patch(f"{base}/web", json=patch).status_code == 200
        second = until(
            lambda: (ids := settled(run_async, server, kit, "web", 2)) and not ids & first and ids, "a rollout"
        )
        assert len(second) == 2
        for info in containers(run_async, server, kit, "web"):
            assert _env_of(run_async, info.name, "COLOUR") == "blue"

        # Suspended: no replica; resumed: two again.
        assert api.patch(f"{base}/web", json={"spec": {"defaultOptions": {"suspend": True}}}).status_code == 200
        until(lambda: not containers(run_async, server, kit, "web"), "suspended workload's containers removed")
        assert api.patch(f"{base}/web", json={"spec": {"defaultOptions": {"suspend": False}}}).status_code == 200
        settled(run_async, server, kit, "web", 2)

        # Scaled down (the platform refuses minScale 0 on a standard workload without KEDA:
        # suspending, above, is its "zero"): the highest index goes.
        scale = {"spec": {"defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 1}}}}
        assert api.patch(f"{base}/web", json=scale).status_code == 200
        settled(run_async, server, kit, "web", 1)
        assert [c.labels["plinth.replica"] for c in containers(run_async, server, kit, "web")] == ["web-0"]

        assert api.delete(f"{base}/web").status_code in (200, 202, 204)
        until(lambda: not containers(run_async, server, kit, "web"), "deleted workload's containers removed")
    assert running[-1].control is not None and "web" not in str(running[-1].control.errors)


def test_the_loop_restarts_a_crashing_replica_and_observes_readiness(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit
) -> None:
    """What the loop observes reaches the API through its reporter: the crash loop's exit code
    and restarts, a failing readiness probe, then real readiness in the deployment and status."""
    kit, base = test_containers, f"/org/{server.org}/gvc/{GVC}/workload"
    crash = workload_doc("crash", kit, 1)
    crash["spec"]["containers"][0].update(command="sh", args=["-c", "sleep 1; exit 3"])
    probed = workload_doc("probed", kit, 1)
    probe = {"httpGet": {"path": "/missing"}, "initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1}
    probed["spec"]["containers"][0]["readinessProbe"] = probe

    def observed(name: str) -> Any:
        control = running[-1].control
        assert control is not None
        return control.supervisor.observed().get(f"{server.org}/{GVC}/{name}")

    with server.client() as api:
        for doc in (crash, probed):
            assert api.post(base, json=doc).status_code == 201
        until(lambda: (o := observed("crash")) and o.restarts >= 2, "two restarts of the crashing replica")
        # Between its back-offs the replica runs for a second (ready, no message): wait for a crash.
        until(lambda: "exited with code 3" in observed("crash").message, "the exit code observed")

        def reported(name: str) -> Any:
            return api.get(f"{base}/{name}").json()["status"]

        def deployment(name: str) -> Any:
            return api.get(f"{base}/{name}/deployment/{LOCATION}").json()["status"]

        until(
            lambda: reported("crash")["healthCheck"]["message"] == "crash loop: exit code 3",
            "the crash loop's exit code in the workload's status",
        )
        assert reported("crash")["ready"] is False
        until(
            lambda: any(
                c["restarts"]["count"] >= 2 for v in deployment("crash")["versions"] for c in v["containers"].values()
            ),
            "the restarts counted in the deployment",
        )
        until(lambda: (o := observed("probed")) and "answered 404" in o.message, "the failing readiness probe seen")
        assert observed("probed").ready == 0
        until(lambda: "answered 404" in deployment("probed")["message"], "the failing probe in the deployment")
        assert reported("probed")["ready"] is False
        probe["httpGet"]["path"] = "/index.html"  # a new template, ready once its probe passes
        put = api.put(f"{base}/probed", json=probed)
        assert put.status_code == 200
        version = put.json()["version"]
        until(lambda: (o := observed("probed")) and o.ready == 1 and o.message == "", "the probed replica ready")
        until(lambda: reported("probed")["ready"] is True, "the workload's status ready")
        shown = deployment("probed")
        assert shown["ready"] is True and shown["lastProcessedVersion"] == version
        assert [v["workload"] for v in shown["versions"]] == [version]
        for name in ("crash", "probed"):
            assert api.delete(f"{base}/{name}").status_code in (200, 202, 204)


def test_the_loop_serves_a_workloads_endpoint_through_the_gateway(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, gateway: tuple[Caddy, str]
) -> None:
    kit, base, listen = test_containers, f"/org/{server.org}/gvc/{GVC}/workload", gateway[1]
    doc = workload_doc("gw", kit, 1)
    doc["spec"]["firewallConfig"] = {"external": {"inboundAllowCIDR": ["127.0.0.0/8"]}}
    with server.client() as api:
        alias = api.get(f"/org/{server.org}/gvc/{GVC}").json()["alias"]
        host = f"gw-{alias}.localhost"

        def status() -> int:
            try:
                return httpx.get(f"http://{listen}/", headers={"Host": host}, timeout=10).status_code
            except httpx.TransportError:
                return 0  # the gateway's first configuration is not loaded yet

        assert api.post(base, json=doc).status_code == 201
        until(lambda: status() == 200, "the workload's endpoint answered through the gateway")
        assert api.patch(f"{base}/gw", json={"spec": {"defaultOptions": {"suspend": True}}}).status_code == 200
        until(lambda: status() == 503, "no ready replica: 503")
        closed = {"spec": {"firewallConfig": {"external": {"inboundAllowCIDR": []}}}}
        assert api.patch(f"{base}/gw", json=closed).status_code == 200
        until(lambda: status() == 403, "nobody allowed: 403")
        assert api.delete(f"{base}/gw").status_code in (200, 202, 204)
        until(lambda: status() == 404, "a deleted workload has no route")


def test_the_loop_runs_a_cron_workload_on_its_schedule(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit, base = test_containers, f"/org/{server.org}/gvc/{GVC}/workload"
    job = workload_doc("tick", kit, 1)
    job["spec"] = {
        "type": "cron",
        "containers": [{"name": "main", "image": kit.image, "command": "sh", "args": ["-c", "exit 0"]}],
        "job": {"schedule": "@every 2s", "historyLimit": 2},
    }
    control = running[-1].control
    assert control is not None

    def finished() -> list[Any]:
        runs = control.cron.executions().get(f"{server.org}/{GVC}/tick", [])
        return [r for r in runs if r.status == "succeeded"]

    with server.client() as api:
        assert api.post(base, json=job).status_code == 201, "the API takes a cron workload"
        until(lambda: len(finished()) >= 2, "two runs of the cron workload succeeded")
        assert all(r.exit_code == 0 and r.location == LOCATION for r in finished())
        assert api.delete(f"{base}/tick").status_code in (200, 202, 204)
        until(lambda: not containers(run_async, server, kit, "tick"), "the job's containers removed")


def test_commands_move_through_their_lifecycle_as_they_really_run(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    """runCronWorkload runs the job now (with its overrides) and completes or fails with it, shown
    as ``command-{id}`` in jobExecutions; stopReplica replaces the replica and completes."""
    kit, base = test_containers, f"/org/{server.org}/gvc/{GVC}/workload"
    job = workload_doc("ondemand", kit, 1)
    job["spec"] = {
        "type": "cron",
        "containers": [{"name": "main", "image": kit.image, "command": "sh", "args": ["-c", "exit 0"]}],
        "job": {"schedule": "0 0 1 1 *"},  # never within the test: only commands run it
    }
    with server.client() as api:
        assert api.post(base, json=job).status_code == 201
        assert api.post(base, json=workload_doc("stoppable", kit, 1)).status_code == 201
        [before] = settled(run_async, server, kit, "stoppable", 1)

        def command(name: str, body: dict[str, Any]) -> str:
            made = api.post(f"{base}/{name}/-command", json=body)
            assert made.status_code == 201, made.text
            assert made.json()["lifecycleStage"] == "pending"
            return str(made.json()["id"])

        def stage(name: str, command_id: str) -> str:
            return str(api.get(f"{base}/{name}/-command/{command_id}").json()["lifecycleStage"])

        def executions() -> dict[str, str]:
            shown = api.get(f"{base}/ondemand/deployment/{LOCATION}").json()["status"]
            return {e["name"]: e["status"] for e in shown.get("jobExecutions") or []}

        run = {"type": "runCronWorkload", "spec": {"location": LOCATION}}
        ok = command("ondemand", run)
        until(lambda: stage("ondemand", ok) in ("completed", "failed"), "the on-demand run ended")
        assert stage("ondemand", ok) == "completed"
        until(lambda: executions().get(f"command-{ok}") == "successful", "the run in jobExecutions")
        override = {"name": "main", "command": "sh", "args": ["-c", "exit 4"]}
        bad = command("ondemand", {**run, "spec": {"location": LOCATION, "containerOverrides": [override]}})
        until(lambda: stage("ondemand", bad) == "failed", "the failing run's command failed")
        assert "4" in str(api.get(f"{base}/ondemand/-command/{bad}").json()["status"])

        stop = command("stoppable", {"type": "stopReplica", "spec": {"location": LOCATION, "replica": "stoppable-0"}})
        until(lambda: stage("stoppable", stop) == "completed", "the stopReplica command completed")
        until(lambda: settled(run_async, server, kit, "stoppable", 1) != {before}, "the replica replaced")
        for name in ("ondemand", "stoppable"):
            assert api.delete(f"{base}/{name}").status_code in (200, 202, 204)


def test_a_new_loop_adopts_what_the_last_one_started(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit = test_containers
    with server.client() as api:
        assert api.post(f"/org/{server.org}/gvc/{GVC}/workload", json=workload_doc("keep", kit, 2)).status_code == 201
    before = settled(run_async, server, kit, "keep", 2)
    running[-1].stop()
    running.append(LoopThread(server, kit, KEY, gateway=running[-1].gateway))
    until(lambda: running[-1].passes >= 1, "the new loop's first pass")
    control = running[-1].control
    assert control is not None
    names = {c.name for c in containers(run_async, server, kit, "keep")}
    # A pass can fail as a whole when the engine's CLI is busy with the other xdist worker's
    # containers; the next pass retries. What adoption means is checked below: the new loop
    # names them adopted and never restarted them (the same container IDs).
    until(
        lambda: (report := control.last_report) is not None and names <= set(report.adopted),
        f"the new loop adopts {names} (last report: {control.last_report})",
    )
    assert running_ids(run_async, server, kit, "keep") == before


def test_a_container_removed_behind_the_loops_back_is_made_again(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit = test_containers
    with server.client() as api:
        assert api.post(f"/org/{server.org}/gvc/{GVC}/workload", json=workload_doc("drift", kit, 1)).status_code == 201
    (gone,) = settled(run_async, server, kit, "drift", 1)
    podman("rm", "--force", "--time", "0", gone)
    # No write happened, so no watch event: the prober (its listing changed) or the periodic
    # relist wakes the loop.
    remade = until(lambda: (ids := settled(run_async, server, kit, "drift", 1)) != {gone} and ids, "remade")
    assert gone not in remade


def test_a_secret_reference_holds_the_workload_with_an_error_naming_it(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit, base = test_containers, f"/org/{server.org}/gvc/{GVC}/workload"
    with server.client() as api:
        assert api.post(base, json=workload_doc("sealed", kit, 1)).status_code == 201
    before = settled(run_async, server, kit, "sealed", 1)
    secret_env = workload_doc("sealed", kit, 1, env={"TOKEN": "cpln://secret/api-token.key"})["spec"]["containers"]
    with server.client() as api:
        assert api.patch(f"{base}/sealed", json={"spec": {"containers": secret_env}}).status_code == 200
    key = f"{server.org}/{GVC}/sealed"
    message = until(lambda: (running[-1].control.errors if running[-1].control else {}).get(key), "the error")
    # The server's own judgement (the workload's status.warning), naming the reference.
    assert "api-token" in message and "does not exist" in message
    # Held: the replica that ran keeps running, neither replaced nor collected.
    assert running_ids(run_async, server, kit, "sealed") == before
    # Not fatal: the other workloads of the org are still served by the same loop.
    with server.client() as api:
        assert api.post(base, json=workload_doc("beside", kit, 1)).status_code == 201
    settled(run_async, server, kit, "beside", 1)
    assert running_ids(run_async, server, kit, "sealed") == before
    with server.client() as api:
        assert api.delete(f"{base}/sealed").status_code in (200, 202, 204)
    until(lambda: not containers(run_async, server, kit, "sealed"), "the held workload's containers go with it")
    until(lambda: key not in (running[-1].control.errors if running[-1].control else {key: ""}), "error gone")


def test_a_restarted_server_is_watched_again(
    server: ServerProcess,
    database: str | None,
    running: list[LoopThread],
    test_containers: ContainerKit,
    run_async: RunAsync,
) -> None:
    kit = test_containers
    port = int(server.url.rsplit(":", 1)[1])
    server.stop()
    restarted = start_server(server.data_dir, database, org=server.org, port=port)
    server.process, server.key = restarted.process, restarted.key
    with server.client() as api:
        assert api.post(f"/org/{server.org}/gvc/{GVC}/workload", json=workload_doc("after", kit, 1)).status_code == 201
    settled(run_async, server, kit, "after", 1)
    with server.client() as api:
        assert api.delete(f"/org/{server.org}/gvc/{GVC}/workload/after").status_code in (200, 202, 204)
    until(lambda: not containers(run_async, server, kit, "after"), "deleted after the restart")


def test_a_position_the_server_does_not_know_is_answered_410_and_listed_again(
    server: ServerProcess, running: list[LoopThread], run_async: RunAsync, tmp_path: Path
) -> None:
    with server.client() as api:
        listed = api.get(f"/org/{server.org}/workload").json()["items"]
        stale = api.get(f"/org/{server.org}/workload", params={"watch": "true", "resourceVersion": "999999999"})
    assert stale.status_code == 410  # what the informer meets below
    informer = Informer(server.url, server.key, server.org, resource_version="999999999")

    async def sync() -> None:
        task = asyncio.create_task(informer.run())
        try:
            await asyncio.wait_for(informer.wait_synced(), WAIT_S)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    run_async(sync())
    # Synced only happens after a full list: the 410 made each stream (GVCs, workloads,
    # domains, locations, secrets, volume sets) list again.
    assert informer.lists == 6
    assert set(informer.gvcs) == {GVC}
    assert {name for _, name in informer.workloads} == {doc["name"] for doc in listed}


def test_a_readiness_verdict_is_reported_at_once_without_a_pass(
    server: ServerProcess, running: list[LoopThread], test_containers: ContainerKit, run_async: RunAsync
) -> None:
    """When only a replica's readiness verdict changes there is nothing to reconcile: the prober
    has the loop report that workload at once (``after_probe``). While passes report nothing
    (their hook is replaced by one that posts nothing), the server still takes an observation
    of the replica ready once its probe passes: that report posted it. (What the server
    took is read from the reporter: an earlier test of this module may have restarted the
    server without ``--runtime containers``, whose status would not show it.)"""
    kit, base = test_containers, f"/org/{server.org}/gvc/{GVC}/workload"
    doc = workload_doc("gated", kit, 1)
    # A generous timeout: on a busy machine ``podman exec`` may take over a second.
    probe = {"exec": {"command": ["test", "-f", "/tmp/ready"]}, "initialDelaySeconds": 0, "periodSeconds": 1}
    doc["spec"]["containers"][0]["readinessProbe"] = {**probe, "failureThreshold": 1, "timeoutSeconds": 10}
    control = running[-1].control
    assert control is not None and control.after_probe is not None
    reporter = control.after_pass
    assert isinstance(reporter, Reporter)
    calls: list[str] = []

    async def pass_reports_nothing(*args: Any) -> None:
        calls.append("pass")

    def recorded(hook: Any) -> Any:
        async def call(*args: Any) -> None:
            calls.append("probe")
            await hook(*args)

        return call

    def sent() -> list[dict[str, Any]]:
        taken = reporter.sent.get(f"{GVC}/gated") or {}
        return [r for loc in taken.get("locations", []) for r in loc["replicas"]]

    with server.client() as api:
        assert api.post(base, json=doc).status_code == 201
        (name,) = until(
            lambda: [c.name for c in containers(run_async, server, kit, "gated") if c.running],
            "the gated replica's container running",
        )
        until(
            lambda: any("exec probe" in r["message"] and not r["ready"] for r in sent()),
            lambda: f"the failing probe reported ({sent()})",
        )
        original = control.after_pass, control.after_probe
        control.after_pass, control.after_probe = pass_reports_nothing, recorded(original[1])
        try:
            exec_out(run_async, name, ["touch", "/tmp/ready"])
            until(lambda: any(r["ready"] for r in sent()), lambda: f"the ready replica reported ({sent()})")
        finally:
            control.after_pass, control.after_probe = original
        assert "probe" in calls, calls
        assert api.delete(f"{base}/gated").status_code in (200, 202, 204)
        until(lambda: not containers(run_async, server, kit, "gated"), "the gated workload's containers removed")
