"""The official CLI (pinned, unchanged) against ``plinth serve --runtime containers``: what it
applies and commands really runs as podman containers behind Caddy (issue 22), on both stores.

- ``cpln apply --ready`` of a GVC and a workload returns only once the workload serves (the
  gateway answers at once), and fails on a workload whose image is missing; ``plinth apply
  --ready`` does the same (a real run beside ``tests/cli/test_apply_ready.py``'s reported ones).
- ``cpln workload stop`` / ``start`` take the replicas to zero containers and back;
  ``force-redeployment`` replaces them (new container IDs); ``cpln workload cron start`` runs
  the job: a container runs and the command completes as ``command-{id}``.

The CLI's ``--ready`` polls 60 times, 5 s apart (its bundle: ``retryFn`` with
``FIVE_MINUTES / FIVE_SECONDS``), and has no timeout option: a test runs it with
``NODE_OPTIONS=--require`` a script that divides every delay of 1 s or more by
:data:`CLOCK_FACTOR`, so its verdict on a workload that never gets ready comes in seconds.

One server per module and store, with a container scope of its own
(``tests/support/runtime_server.py``); each test makes its own GVC, deletes it at the end, and
the module's finalizer removes whatever containers of the scope remain.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.compat.conftest import Cpln, Plinth, Run
from tests.support.containers import INDEX
from tests.support.runtime_server import RuntimeServer, wait_for

LOCATION = "aws-us-east-2"
MISSING_IMAGE = "localhost/plinth-no-such-image:1"
#: How much faster the official CLI's clock runs under ``NODE_OPTIONS`` (5 s polls become 0.1 s).
CLOCK_FACTOR = 50
FAST_CLOCK = f"""\
// Divides the official CLI's waits (setTimeout of 1 s or more) by {CLOCK_FACTOR}; shorter ones stay.
const util = require('util');
const original = global.setTimeout;
function fast(callback, ms, ...args) {{
  return original(callback, typeof ms === 'number' && ms >= 1000 ? ms / {CLOCK_FACTOR} : ms, ...args);
}}
fast[util.promisify.custom] = original[util.promisify.custom];
global.setTimeout = fast;
"""


@dataclass
class Clis:
    """``cpln`` and ``plinth`` against the runtime server, in its org."""

    runtime: RuntimeServer
    cpln_bin: Path
    home: Path
    clock: Path

    def cpln(self, *args: str, fast_clock: bool = False) -> Run:
        server = self.runtime.api
        runner = Cpln(self.cpln_bin, self.home, server.url, server.key)
        env = {"NODE_OPTIONS": f"--require={self.clock}"} if fast_clock else None
        auth = ("--endpoint", server.url, "--token", server.key, "--org", self.runtime.org)
        return runner.raw(*args, *auth, env=env)

    def plinth(self, *args: str) -> Run:
        server = self.runtime.api
        return Plinth(self.home, server.url, server.key)(*args, "--org", self.runtime.org)


@pytest.fixture(scope="module")
def clis(runtime: RuntimeServer, cpln_bin: Path, cpln_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Clis:
    clock = tmp_path_factory.mktemp("fast-clock") / "fast-clock.js"
    clock.write_text(FAST_CLOCK)
    return Clis(runtime, cpln_bin, cpln_home, clock)


@pytest.fixture
def gvc(runtime: RuntimeServer) -> Iterator[str]:
    """A GVC name of this test's own; whatever the test made in it is deleted afterwards (the
    controller then removes the containers; the module's finalizer removes any left)."""
    name = f"g{uuid.uuid4().hex[:8]}"
    yield name
    runtime.delete_gvc(name)


def ok(run: Run) -> Run:
    assert run.code == 0, f"exit {run.code}\n{run.stdout}\n{run.stderr}"
    return run


def workload_body(name: str, image: str, **spec: Any) -> dict[str, Any]:
    body = {
        "type": "standard",
        "containers": [{"name": "main", "image": image, "ports": [{"number": 8080, "protocol": "http"}]}],
        "defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 1}},
        "firewallConfig": {"external": {"inboundAllowCIDR": ["127.0.0.1/32"]}},
    }
    return {"kind": "workload", "name": name, "spec": {**body, **spec}}


def write_stack(path: Path, gvc: str, *workloads: dict[str, Any]) -> Path:
    """A GVC placed in one location and ``workloads`` in it, as one YAML stream."""
    import yaml

    placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
    documents = [{"kind": "gvc", "name": gvc, "spec": placement}, *({**w, "gvc": gvc} for w in workloads)]
    path.write_text(yaml.safe_dump_all(documents))
    return path


def make_gvc(runtime: RuntimeServer, name: str) -> None:
    body = {"name": name, "spec": {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}}
    with runtime.api.client() as api:
        made = api.post(f"/org/{runtime.org}/gvc", json=body)
        assert made.status_code == 201, made.text


def api_get(runtime: RuntimeServer, path: str) -> Any:
    with runtime.api.client() as api:
        answer = api.get(f"/org/{runtime.org}{path}")
        assert answer.status_code == 200, answer.text
        return answer.json()


def running(runtime: RuntimeServer, gvc: str, workload: str) -> dict[str, str]:
    """The workload's running containers in ``gvc``: engine name -> ID."""
    found = runtime.containers(**{"plinth.gvc": gvc, "plinth.workload": workload})
    return {c["Names"][0]: c["Id"] for c in found if c.get("State") == "running"}


def wait_replicas(runtime: RuntimeServer, gvc: str, workload: str, count: int) -> dict[str, str]:
    [found] = wait_for(  # in a list: no container at all is an answer too
        lambda: [found] if len(found := running(runtime, gvc, workload)) == count else None,
        f"{count} running container(s) of {gvc}/{workload}",
    )
    return found


def wait_ready(runtime: RuntimeServer, gvc: str, workload: str) -> dict[str, Any]:
    """The workload as the API serves it, once its status is ready at its current version."""

    def ready() -> dict[str, Any] | None:
        item: dict[str, Any] = api_get(runtime, f"/gvc/{gvc}/workload/{workload}")
        return item if item["status"].get("ready") else None

    return wait_for(ready, f"{gvc}/{workload} reported ready through the API")


def host(runtime: RuntimeServer, gvc: str, workload: str) -> str:
    return f"{workload}-{api_get(runtime, f'/gvc/{gvc}')['alias']}.localhost"


def assert_serving(runtime: RuntimeServer, gvc: str, workload: str) -> None:
    """Ready now, without waiting: the API says so at its latest version, and the gateway answers."""
    item = api_get(runtime, f"/gvc/{gvc}/workload/{workload}")
    assert item["status"]["ready"] is True, item["status"]
    status = api_get(runtime, f"/gvc/{gvc}/workload/{workload}/deployment/{LOCATION}")["status"]
    assert status["lastProcessedVersion"] == item["version"], status
    answer = runtime.gateway_get(host(runtime, gvc, workload))
    assert answer is not None and answer.status_code == 200, answer
    assert answer.content == INDEX


def test_apply_ready_returns_once_the_workload_serves(clis: Clis, gvc: str, tmp_path: Path) -> None:
    runtime = clis.runtime
    stack = write_stack(tmp_path / "stack.yaml", gvc, workload_body("web", runtime.kit.image))
    applied = ok(clis.cpln("apply", "--file", str(stack), "--ready", fast_clock=True))
    assert f"Created /org/{runtime.org}/gvc/{gvc}/workload/web" in applied.stdout
    assert_serving(runtime, gvc, "web")
    # A new version with Plinth's own CLI: it returns once the new replica serves it.
    before = set(running(runtime, gvc, "web").values())
    env = [{"name": "GREETING", "value": "second"}]
    changed = workload_body("web", runtime.kit.image)
    changed["spec"]["containers"][0]["env"] = env
    write_stack(stack, gvc, changed)
    rolled = ok(clis.plinth("apply", "-f", str(stack), "--ready"))
    assert f"gvc/{gvc}/workload/web ready" in rolled.stdout
    assert_serving(runtime, gvc, "web")
    assert set(running(runtime, gvc, "web").values()) - before, "no new container serves the new version"


def test_apply_ready_fails_on_a_missing_image(clis: Clis, gvc: str, tmp_path: Path) -> None:
    runtime = clis.runtime
    stack = write_stack(tmp_path / "stack.yaml", gvc, workload_body("broken", MISSING_IMAGE))
    failed = clis.cpln("apply", "--file", str(stack), "--ready", fast_clock=True)
    assert failed.code != 0, failed.stdout
    assert "Workload(s) could not start successfully" in failed.stdout + failed.stderr
    # The controller says why, through the API; Plinth's CLI names the workload and that reason.
    path = f"/gvc/{gvc}/workload/broken"
    wait_for(
        lambda: "image missing" in api_get(runtime, path)["status"]["healthCheck"].get("message", ""),
        f"'image missing' in {gvc}/broken's health check",
    )
    refused = clis.plinth("apply", "-f", str(stack), "--ready", "--ready-timeout", "1")
    assert refused.code == 1, refused.stdout + refused.stderr
    assert f"gvc/{gvc}/workload/broken: {LOCATION}: image missing: {MISSING_IMAGE}" in refused.stderr
    assert running(runtime, gvc, "broken") == {}


def test_stop_start_and_force_redeployment_act_on_containers(clis: Clis, gvc: str) -> None:
    runtime = clis.runtime
    make_gvc(runtime, gvc)
    with runtime.api.client() as api:
        body = workload_body("web", runtime.kit.image)
        made = api.post(f"/org/{runtime.org}/gvc/{gvc}/workload", json={"name": "web", "spec": body["spec"]})
        assert made.status_code == 201, made.text
    first = wait_replicas(runtime, gvc, "web", 1)

    ok(clis.cpln("workload", "stop", "web", "--gvc", gvc))
    wait_replicas(runtime, gvc, "web", 0)
    wait_for(
        lambda: api_get(runtime, f"/gvc/{gvc}/workload/web")["status"].get("currentReplicaCount") == 0,
        "currentReplicaCount 0 once stopped",
    )
    ok(clis.cpln("workload", "start", "web", "--gvc", gvc))
    started = wait_replicas(runtime, gvc, "web", 1)
    assert set(started.values()).isdisjoint(first.values())  # a new container, not the old one resumed
    wait_ready(runtime, gvc, "web")

    ok(clis.cpln("workload", "force-redeployment", "web", "--gvc", gvc))
    redeployed = wait_for(
        lambda: found if (found := running(runtime, gvc, "web")) and set(found.values()).isdisjoint(started.values())
        else None,
        "the replica replaced by a container with a new ID",
    )  # fmt: skip
    assert len(redeployed) == 1
    item = wait_ready(runtime, gvc, "web")
    assert "cpln/deployTimestamp" in item["tags"]


def test_cron_start_runs_the_job(clis: Clis, gvc: str) -> None:
    runtime = clis.runtime
    make_gvc(runtime, gvc)
    container = {"name": "main", "image": runtime.kit.image, "command": "sh", "args": ["-c", "echo cron ran"]}
    spec = {"type": "cron", "job": {"schedule": "0 3 * * *"}, "containers": [container]}
    with runtime.api.client() as api:
        made = api.post(f"/org/{runtime.org}/gvc/{gvc}/workload", json={"name": "nightly", "spec": spec})
        assert made.status_code == 201, made.text
    ok(clis.cpln("workload", "cron", "start", "nightly", "--gvc", gvc, "--location", LOCATION))
    base = f"/gvc/{gvc}/workload/nightly"

    def finished() -> list[dict[str, Any]] | None:
        items: list[dict[str, Any]] = api_get(runtime, f"{base}/-command")["items"]
        return items if items and items[0]["lifecycleStage"] in ("completed", "failed") else None

    [command] = wait_for(finished, "the runCronWorkload command to finish")
    assert (command["type"], command["lifecycleStage"]) == ("runCronWorkload", "completed"), command
    run = {"name": f"command-{command['id']}", "status": "successful"}

    def executed() -> bool:
        status = api_get(runtime, f"{base}/deployment/{LOCATION}")["status"]
        return any(run.items() <= e.items() for e in status.get("jobExecutions") or [])

    wait_for(executed, f"a successful job execution {run['name']} in the deployment")
    ran = runtime.containers(**{"plinth.gvc": gvc, "plinth.workload": "nightly"})
    assert ran and all(c["State"] == "exited" and c["ExitCode"] == 0 for c in ran), ran
