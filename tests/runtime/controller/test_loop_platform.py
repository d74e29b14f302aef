"""What the control loop plans as the platform would run it, against a real server and real
podman: secret values through the API's reveal (and only where the server says the workload's
identity may reveal them), GVCs placed by ``locationQuery``, a network per GVC where workloads
reach each other by internal name, and a rollout through a real Caddy that fails no request.

One server and one loop per store; the org carries the test run's id and a uuid, so two
instances of this module (two xdist workers) never meet each other's containers.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from plinth.runtime.gateway import Caddy, RouteTable
from tests.aio import RunAsync
from tests.support.containers import INDEX, TEST_RUN, ContainerKit, ensure_tcp_migrate_req, podman
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
from tests.support.server import ServerProcess

KEY = os.urandom(32)
#: What a request on a kept-alive connection that the gateway closed as idle meets.
CLOSED_WHILE_IDLE = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
LOCATION = "aws-us-east-2"
GVC = "main"


@pytest.fixture(scope="module")
def server(
    database: str | None, test_containers: ContainerKit, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    org = f"t{test_containers.run_id}{uuid.uuid4().hex[:6]}"
    with loop_server(tmp_path_factory.mktemp("platform-server"), database, org, GVC, LOCATION) as proc:
        yield proc


@pytest.fixture(scope="module")
def gateway(test_containers: ContainerKit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Caddy, str]]:
    with loop_gateway(Path(tmp_path_factory.mktemp("platform-caddy"))) as running:
        yield running


@pytest.fixture(scope="module")
def loop(server: ServerProcess, test_containers: ContainerKit, gateway: tuple[Caddy, str]) -> Iterator[LoopThread]:
    caddy, listen = gateway

    async def apply(table: RouteTable) -> None:
        await caddy.apply(table, listen)

    thread = LoopThread(server, test_containers, KEY, gateway=apply)
    yield thread
    thread.stop()


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def _secrets_of(org: str, workload: str) -> list[str]:
    names = podman("secret", "ls", "--format", "{{.Name}}", check=False).stdout.split()
    if not names:
        return []
    inspected = podman("secret", "inspect", *names, check=False)
    if inspected.returncode != 0:  # one went since it was listed: not known yet, ask again
        return ["(changing)"]
    docs = json.loads(inspected.stdout or "[]")
    return [
        doc["Spec"]["Name"]
        for doc in docs
        if (labels := doc["Spec"].get("Labels") or {}).get("plinth.org") == org
        and labels.get("plinth.workload") == workload
    ]


def test_secrets_reach_env_and_files_only_when_the_identity_may_reveal_them_and_a_new_value_rolls(
    server: ServerProcess, loop: LoopThread, test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit, org = test_containers, server.org
    base = f"/org/{org}/gvc/{GVC}/workload"
    doc = workload_doc("vault", kit, 1, env={"PASS": "cpln://secret/db.pass", "WHOLE": "cpln://secret/db"})
    doc["spec"]["containers"][0]["volumes"] = [
        {"uri": "cpln://secret/db", "path": "/etc/db"},
        {"uri": "cpln://secret/cert", "path": "/etc/cert.pem"},
    ]
    with server.client() as api:
        _ok(api.post(f"/org/{org}/gvc/{GVC}/identity", json={"name": "app"}), 201)
        _ok(api.post(f"/org/{org}/secret", json={"name": "db", "type": "dictionary", "data": {"pass": "p-one"}}), 201)
        opaque = {"name": "cert", "type": "opaque", "data": {"payload": "Y2VydC1ieXRlcw==", "encoding": "base64"}}
        _ok(api.post(f"/org/{org}/secret", json=opaque), 201)
        _ok(api.post(base, json=doc), 201)
        # No identity: the server says the workload may not reveal them, so it is held.
        key = f"{org}/{GVC}/vault"
        message = until(lambda: loop.errors().get(key), "the workload held for its secret references")
        assert "secret 'db'" in message and "p-one" not in message
        assert not containers(run_async, server, kit, "vault")

        identity = f"//gvc/{GVC}/identity/app"
        _ok(api.patch(f"{base}/vault", json={"spec": {"identityLink": identity}}))
        policy = {
            "name": "reveal-app",
            "targetKind": "secret",
            "targetLinks": ["//secret/db", "//secret/cert"],
            "bindings": [{"permissions": ["reveal"], "principalLinks": [identity]}],
        }
        _ok(api.post(f"/org/{org}/policy", json=policy), 201)
        (first,) = settled(run_async, server, kit, "vault", 1, loop.errors)
        (info,) = containers(run_async, server, kit, "vault")
        assert exec_out(run_async, info.name, ["sh", "-c", 'echo "$PASS"']) == "p-one"
        assert json.loads(exec_out(run_async, info.name, ["sh", "-c", 'echo "$WHOLE"'])) == {"pass": "p-one"}
        assert exec_out(run_async, info.name, ["cat", "/etc/db/pass"]) == "p-one"
        assert json.loads(exec_out(run_async, info.name, ["cat", "/etc/db/___cpln___.secret"])) == {"pass": "p-one"}
        assert exec_out(run_async, info.name, ["cat", "/etc/cert.pem"]) == "cert-bytes"
        assert "p-one" not in json.dumps(dict(info.labels)) and key not in loop.errors()

        # A new value rolls the replica, which then has it.
        _ok(api.patch(f"/org/{org}/secret/db", json={"data": {"pass": "p-two"}}))

        def rolled() -> bool:
            ids = running_ids(run_async, server, kit, "vault")
            found = containers(run_async, server, kit, "vault")
            return bool(ids) and first not in ids and len(found) == 1

        until(rolled, "the replica replaced after the secret changed")
        (info,) = containers(run_async, server, kit, "vault")
        assert exec_out(run_async, info.name, ["sh", "-c", 'echo "$PASS"']) == "p-two"
        _ok(api.delete(f"{base}/vault"), 202)
    until(lambda: not containers(run_async, server, kit, "vault"), "the workload's containers removed")
    # Their engine secrets go with them; waited for, so the module's teardown never meets a
    # removal under way.
    until(lambda: not _secrets_of(org, "vault"), "the workload's engine secrets removed")


def test_a_gvc_placed_by_location_query_runs_where_the_query_selects(
    server: ServerProcess, loop: LoopThread, test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit, org = test_containers, server.org
    tag = f"pick-{uuid.uuid4().hex[:6]}"

    def located() -> set[str]:
        return {c.labels["plinth.location"] for c in containers(run_async, server, kit, "found")}

    with server.client() as api:
        _ok(api.post(f"/org/{org}/location", json={"name": "byok-a", "tags": {tag: "yes"}}), 201)
        query = {"kind": "location", "spec": {"match": "all", "terms": [{"op": "=", "tag": tag, "value": "yes"}]}}
        _ok(
            api.post(
                f"/org/{org}/gvc", json={"name": "queried", "spec": {"staticPlacement": {"locationQuery": query}}}
            ),
            201,
        )
        _ok(api.post(f"/org/{org}/gvc/queried/workload", json=workload_doc("found", kit, 1)), 201)
        until(lambda: located() == {"byok-a"}, "a replica in the location the query selects")
        # A location joining the query's selection: the workload runs there too.
        _ok(api.post(f"/org/{org}/location", json={"name": "byok-b", "tags": {tag: "yes"}}), 201)
        until(lambda: located() == {"byok-a", "byok-b"}, "a replica in the location that joined")
        # Disabled: it leaves the placement.
        _ok(api.patch(f"/org/{org}/location/byok-a", json={"spec": {"enabled": False}}))
        until(lambda: located() == {"byok-b"}, "the disabled location's replica removed")
        _ok(api.delete(f"/org/{org}/gvc/queried/workload/found"), 202)
    until(lambda: not containers(run_async, server, kit, "found"), "the workload's containers removed")


def _networks(run_id: str, org: str) -> dict[str, dict[str, str]]:
    names = podman("network", "ls", "--quiet", "--filter", f"label={TEST_RUN}={run_id}", check=False).stdout.split()
    found: dict[str, dict[str, str]] = {}
    for name in names:
        inspected = podman("network", "inspect", name, check=False)
        if inspected.returncode != 0:  # removed since it was listed (what a test awaits)
            continue
        (doc,) = json.loads(inspected.stdout)
        if doc.get("labels", {}).get("plinth.org") == org:
            found[doc["name"]] = doc["labels"]
    return found


def test_workloads_of_a_gvc_reach_each_other_by_internal_name_on_its_own_network(
    server: ServerProcess, loop: LoopThread, test_containers: ContainerKit, run_async: RunAsync
) -> None:
    kit, org = test_containers, server.org
    with server.client() as api:
        _ok(
            api.post(
                f"/org/{org}/gvc",
                json={"name": "mesh", "spec": {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}},
            ),
            201,
        )
        for name in ("api", "caller"):
            _ok(api.post(f"/org/{org}/gvc/mesh/workload", json=workload_doc(name, kit, 1)), 201)
        internal = _ok(api.get(f"/org/{org}/gvc/mesh/workload/api"))["status"]["internalName"]
        assert internal == "api.mesh.cpln.local"
        settled(run_async, server, kit, "api", 1)
        settled(run_async, server, kit, "caller", 1)
        (caller,) = [c for c in containers(run_async, server, kit, "caller") if c.labels["plinth.gvc"] == "mesh"]
        fetch = ["wget", "-q", "-O-", f"http://{internal}:8080/"]
        # Running is not yet listening: the answer is awaited (bounded), never a timing.
        until(
            lambda: exec_out(run_async, caller.name, fetch).encode() == INDEX.strip(),
            f"{internal} answering from inside the caller",
        )
        labels = _networks(kit.run_id, org)[f"plinth_{org}_mesh"]
        assert labels["plinth.managed"] == "true" and labels["plinth.gvc"] == "mesh"
        # A GVC that is gone takes its network with it.
        for name in ("api", "caller"):
            _ok(api.delete(f"/org/{org}/gvc/mesh/workload/{name}"), 202)
        until(lambda: not containers(run_async, server, kit, "api"), "the workloads removed")
        until(lambda: not containers(run_async, server, kit, "caller"), "the workloads removed")
        until(lambda: api.delete(f"/org/{org}/gvc/mesh").status_code == 202, "the GVC deleted")
    until(lambda: f"plinth_{org}_mesh" not in _networks(kit.run_id, org), "the GVC's network removed")


def test_a_rollout_of_two_replicas_fails_no_request_through_the_gateway(
    server: ServerProcess,
    loop: LoopThread,
    test_containers: ContainerKit,
    gateway: tuple[Caddy, str],
    run_async: RunAsync,
) -> None:
    ensure_tcp_migrate_req()  # Caddy's reloads keep queued connections only with it (docs/runtime.md)
    kit, org, listen = test_containers, server.org, gateway[1]
    base = f"/org/{org}/gvc/{GVC}/workload"
    doc = workload_doc("steady", kit, 2)
    doc["spec"]["firewallConfig"] = {"external": {"inboundAllowCIDR": ["127.0.0.0/8"]}}
    doc["spec"]["rolloutOptions"] = {"maxSurgeReplicas": "1", "maxUnavailableReplicas": "0"}
    with server.client() as api:
        host = f"steady-{_ok(api.get(f'/org/{org}/gvc/{GVC}'))['alias']}.localhost"

        def status() -> int:
            try:
                return httpx.get(f"http://{listen}/", headers={"Host": host}, timeout=10).status_code
            except httpx.TransportError:
                return 0

        _ok(api.post(base, json=doc), 201)
        first = settled(run_async, server, kit, "steady", 2)
        until(lambda: status() == 200, "the workload served through the gateway")
        failures: list[str] = []
        sent = [0]
        done = threading.Event()

        def client() -> None:
            with httpx.Client(timeout=10) as http:
                for i in range(100_000):  # bounded even if the main thread stalled
                    if done.is_set():
                        return
                    try:
                        try:
                            answer = http.get(f"http://{listen}/", headers={"Host": host})
                        except CLOSED_WHILE_IDLE:
                            # A reload closes idle kept-alive connections; an HTTP/1.1 client
                            # retries an idempotent request on a new one (docs/runtime.md).
                            answer = httpx.get(f"http://{listen}/", headers={"Host": host}, timeout=10)
                        if answer.status_code != 200:
                            failures.append(f"request {i}: {answer.status_code}")
                    except httpx.HTTPError as exc:
                        failures.append(f"request {i}: {exc!r}")
                    sent[0] += 1

        thread = threading.Thread(target=client)
        thread.start()
        try:
            patch = {"spec": {"containers": workload_doc("steady", kit, 2, env={"V": "2"})["spec"]["containers"]}}
            _ok(api.patch(f"{base}/steady", json=patch))
            until(lambda: (ids := settled(run_async, server, kit, "steady", 2)) and not ids & first, "the rollout done")
            until(lambda: sent[0] > 0 and loop.errors().get(f"{org}/{GVC}/steady") is None, "requests sent")
        finally:
            done.set()
            thread.join()
        assert failures == []
        _ok(api.delete(f"{base}/steady"), 202)
    until(lambda: not containers(run_async, server, kit, "steady"), "the workload's containers removed")
