"""``plinth serve --runtime containers`` for real: the server starts and supervises the
controller, which runs workloads written through the API as podman containers reached through
Caddy; SIGTERM leaves them to be adopted, orphans are collected, a second replica of the store
waits for the controller lock and takes over, and nothing outside the scope is touched.

One server per module and store (SQLite, then PostgreSQL), under a container scope of its own
(``tests/support/runtime_server.py``). Tests that stop it start it again before they end, and
each test makes its own GVC and workloads, so any test may run alone or in any order.
"""

from __future__ import annotations

import os
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plinth.runtime.containers import identity_labels
from tests.support.containers import INDEX, ContainerKit, podman
from tests.support.runtime_server import RuntimeServer, processes, serving_runtime, wait_for

LOCATION = "aws-us-east-2"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def runtime(
    request: pytest.FixtureRequest, test_containers: ContainerKit, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RuntimeServer]:
    # Two workers: still one controller (serve's main process starts it, never a worker).
    with serving_runtime(
        request.param, tmp_path_factory.mktemp("serve-containers"), test_containers, workers=2
    ) as server:
        yield server


@pytest.fixture
def running(runtime: RuntimeServer) -> RuntimeServer:
    """The module's server, started again if a test left it stopped."""
    if runtime.server is None or runtime.server.process.poll() is not None:
        runtime.start()
    return runtime


def make_gvc(runtime: RuntimeServer, org: str | None = None) -> tuple[str, str]:
    """A new GVC placed in one location: its name and alias."""
    org = org or runtime.org
    name = f"g{uuid.uuid4().hex[:8]}"
    body = {"name": name, "spec": {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}}
    with runtime.api.client() as api:
        created = api.post(f"/org/{org}/gvc", json=body)
        assert created.status_code == 201, created.text
        return name, str(api.get(f"/org/{org}/gvc/{name}").json()["alias"])


def controller_keys(runtime: RuntimeServer) -> list[str]:
    """The keys minted for controllers on the server-admin account (the bootstrap org's admin)."""
    with runtime.api.client() as api:
        keys = api.get(f"/org/{runtime.org}/serviceaccount/admin").json()["keys"]
    return [k["name"] for k in keys if k["description"].startswith("runtime controller")]


def make_workload(runtime: RuntimeServer, gvc: str, name: str, org: str | None = None, type_: str = "standard") -> None:
    body: dict[str, Any] = {
        "name": name,
        "spec": {
            "type": type_,
            "containers": [{"name": "main", "image": runtime.kit.image, "ports": [{"number": 8080}]}],
            "defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 1}},
            "firewallConfig": {"external": {"inboundAllowCIDR": ["0.0.0.0/0"]}},
        },
    }
    with runtime.api.client() as api:
        created = api.post(f"/org/{org or runtime.org}/gvc/{gvc}/workload", json=body)
        assert created.status_code == 201, created.text


def delete(runtime: RuntimeServer, path: str) -> None:
    with runtime.api.client() as api:
        assert api.delete(f"/org/{runtime.org}{path}").status_code in (202, 204)


def test_a_workload_runs_and_answers_through_the_gateway(running: RuntimeServer) -> None:
    gvc, alias = make_gvc(running)
    make_workload(running, gvc, "web")
    running.wait_running("web")
    labels = running.containers(**{"plinth.workload": "web"})[0]["Labels"]
    assert labels["plinth.store"] and labels["plinth.org"] == running.org  # the store's own scope label
    answer = running.wait_gateway(f"web-{alias}.localhost")
    assert answer.content == INDEX
    assert "reloads keep queued connections" in running.log_text()  # reported when the gateway starts
    assert len(running.controllers()) == 1  # one controller for the two workers
    # What runs is what the API reports: the controller's report reaches status and deployments.
    path = f"/org/{running.org}/gvc/{gvc}/workload/web"

    def reported_ready() -> dict[str, Any] | None:
        with running.api.client() as api:
            workload = api.get(path).json()
            deployment = api.get(f"{path}/deployment/{LOCATION}").json()
        ready = workload["status"].get("ready") and deployment["status"].get("ready")
        return deployment if ready else None

    deployment = wait_for(reported_ready, "the workload reported ready through the API")
    with running.api.client() as api:  # its endpoint is the gateway's own URL for it
        assert api.get(path).json()["status"]["endpoint"] == f"http://web-{alias}.localhost:{running.gateway_port}"
    assert deployment["status"]["lastProcessedVersion"] == deployment["status"]["expectedDeploymentVersion"]
    assert deployment["status"]["versions"][0]["ready"] is True


def test_a_serverless_workload_runs_its_replica_and_answers_through_the_gateway(running: RuntimeServer) -> None:
    """Serverless runs as standard does, on its one port (no scale to zero: docs/runtime.md)."""
    gvc, alias = make_gvc(running)
    make_workload(running, gvc, "lambda", type_="serverless")
    running.wait_running("lambda")
    (container,) = running.containers(**{"plinth.workload": "lambda"})
    assert container["Labels"]["plinth.workload-type"] == "serverless"
    assert running.wait_gateway(f"lambda-{alias}.localhost").content == INDEX
    delete(running, f"/gvc/{gvc}/workload/lambda")
    wait_for(lambda: not running.containers(**{"plinth.workload": "lambda"}), "the serverless replica removed")


def test_a_new_org_gets_its_loop(running: RuntimeServer) -> None:
    org = f"n{uuid.uuid4().hex[:12]}"
    with running.api.client() as api:  # the bootstrap admin holds the server-admin right
        assert api.post("/org", json={"name": org}).status_code == 201, "creating an org"
    gvc, alias = make_gvc(running, org)
    home_gvc, home_alias = make_gvc(running)
    make_workload(running, gvc, "fresh", org)
    make_workload(running, home_gvc, "home")
    running.wait_running("fresh")
    assert running.containers(**{"plinth.workload": "fresh"})[0]["Labels"]["plinth.org"] == org
    # The one gateway serves the routes of every org's loop at once.
    running.wait_gateway(f"fresh-{alias}.localhost")
    running.wait_gateway(f"home-{home_alias}.localhost")


def test_restart_adopts_and_orphans_deleted_while_down_are_collected(running: RuntimeServer) -> None:
    gvc, alias = make_gvc(running)
    doomed_gvc, _ = make_gvc(running)
    make_workload(running, gvc, "kept")
    make_workload(running, gvc, "dropped")
    make_workload(running, doomed_gvc, "alone")
    kept = running.wait_running("kept")
    running.wait_running("dropped")
    running.wait_running("alone")

    running.stop()  # SIGTERM: the containers stay
    assert running.running("kept") == kept
    # While no controller runs (the API served alone), a workload and a whole GVC go.
    running.start("--no-controller")
    assert controller_keys(running) == []  # the stopped controller's key was revoked
    delete(running, f"/gvc/{gvc}/workload/dropped")
    delete(running, f"/gvc/{doomed_gvc}/workload/alone")
    delete(running, f"/gvc/{doomed_gvc}")
    running.stop()
    assert running.running("dropped") and running.running("alone")

    running.start()
    wait_for(lambda: len(controller_keys(running)) == 1, "one key minted for the new controller")
    wait_for(lambda: not running.running("dropped") and not running.running("alone"), "the orphans to be removed")
    assert running.running("kept") == kept  # adopted: the same containers, never restarted
    running.wait_gateway(f"kept-{alias}.localhost")


def test_a_second_replica_waits_for_the_lock_and_takes_over(
    running: RuntimeServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    gvc, alias = make_gvc(running)
    make_workload(running, gvc, "solo")
    first = running.wait_running("solo")
    # A second server on the same store (the same database, or the same SQLite file and its
    # secrets key), in the same scope, removing containers when it stops.
    store = running.database_url or f"sqlite:///{running.data_dir / 'plinth.db'}"
    extra: tuple[str, ...] = ("--remove-containers-on-exit",)
    if running.database_url is None:
        extra += ("--secrets-key-file", str(running.data_dir / "secrets.key"))
    replica = RuntimeServer(
        running.kit,
        tmp_path_factory.mktemp("replica"),
        store,
        running.org,
        running.scope,
        running.gateway_port,
        extra_args=extra,
    ).start()
    try:
        replica.wait_log("another process of this store runs it")
        assert running.running("solo") == first  # one controller: nothing made twice
        assert replica.controllers() == [] and len(running.controllers()) == 1

        running.stop()  # SIGTERM to the holder: containers stay, the replica takes over and adopts
        replica.wait_log("holding the store's controller lock")
        replica.wait_gateway(f"solo-{alias}.localhost")
        assert replica.running("solo") == first

        replica.stop()  # --remove-containers-on-exit: SIGTERM removes the scope's containers
        assert replica.containers() == []
    finally:
        replica.stop()


def test_a_container_outside_the_scope_is_never_touched(running: RuntimeServer) -> None:
    gvc, _ = make_gvc(running)
    # Looks like a replica of this org whose workload does not exist, with the --container-label
    # labels, but not the store's own label (another installation's container of an org named alike).
    labels = {**identity_labels(running.org, gvc, "ghost", LOCATION), "plinth.replica": "ghost-0"}
    labels |= {"plinth.container": "main", **running.labels, "plinth.store": "another-store"}
    name = f"t-{running.kit.run_id}-ghost-{uuid.uuid4().hex[:6]}"
    args = [a for k, v in labels.items() for a in ("--label", f"{k}={v}")]
    ghost = podman("run", "--detach", "--name", name, *args, running.kit.image).stdout.strip()
    try:
        make_workload(running, gvc, "real")  # a pass of the org's loop, which sees the ghost's org
        running.wait_running("real")
        delete(running, f"/gvc/{gvc}/workload/real")
        wait_for(lambda: not running.running("real"), "the deleted workload's container to go")
        state = podman("inspect", "--format", "{{.State.Status}}", ghost).stdout.strip()
        assert state == "running"
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)


def controller_pids(runtime: RuntimeServer) -> list[int]:
    """The controllers this server started, in order (its log's "started (pid N)" lines)."""
    return [
        int(pid) for pid in re.findall(r"runtime controller: started \(pid (\d+)\)", runtime.api.log_path.read_text())
    ]


def test_a_dead_controller_is_restarted_and_adopts(running: RuntimeServer) -> None:
    gvc, alias = make_gvc(running)
    make_workload(running, gvc, "steady")
    before = running.wait_running("steady")
    running.wait_gateway(f"steady-{alias}.localhost")
    pid = controller_pids(running)[-1]
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert not [v for v in environ if v.startswith(b"PLINTH_")]  # not even the secrets key
    assert b"token" not in Path(f"/proc/{pid}/cmdline").read_bytes()

    os.kill(pid, signal.SIGKILL)  # its Caddy goes with it (PR_SET_PDEATHSIG)
    wait_for(lambda: len(controller_pids(running)) >= 2 and controller_pids(running)[-1] != pid, "a new controller")
    running.wait_gateway(f"steady-{alias}.localhost")  # the new controller's Caddy holds the port
    wait_for(lambda: len(gateways(running)) == 1, "the dead controller's Caddy to end")
    assert running.running("steady") == before

    # plinth serve itself killed: the controller sees its stdin close and stops, Caddy with it
    # (the next test's fixture starts the server again; the next controller drops the stale key).
    pid = controller_pids(running)[-1]
    running.api.kill()
    wait_for(lambda: not Path(f"/proc/{pid}").exists() and not gateways(running), "the controller and Caddy to end")
    assert running.running("steady") == before  # containers stay, as on SIGTERM


def gateways(runtime: RuntimeServer) -> list[int]:
    """Caddy processes running from this server's gateway directory."""
    return processes(b"caddy", str(runtime.data_dir.resolve() / "gateway").encode())
