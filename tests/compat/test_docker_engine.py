"""The Docker engine end to end: ``plinth serve --runtime containers --container-engine docker``
driven by the official CLI (pinned, unchanged), on both stores.

The driver speaks to podman and docker through their command-line clients
(``plinth.runtime.containers.cli``); podman is the engine of the other runtime tests. Here the
same server runs its workloads on a real Docker daemon (``tests/support/docker.py``): ``cpln
apply --ready`` returns once the workload answers through the gateway; ``cpln workload exec``
gives the command's output and exit code and streams stdin; ``cpln workload connect`` runs a
shell on a terminal; ``cpln cp`` copies both ways; ``cpln logs`` reads what the containers wrote
to docker's ``json-file`` logs, by stream; ``cpln workload replica stop`` replaces a replica; a
restart of the server adopts the running containers and collects those of a workload deleted
while it was down; secrets reach the environment and, as docker has no secret store outside
swarm mode, files on a tmpfs of the host;
workloads of a GVC reach each other by internal name; ``cron start`` runs a job to its exit code.

One server per store, under a container scope of its own; each test makes its own GVC.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plinth.runtime.containers.tmpfs_secrets import TmpfsSecrets
from tests.compat.conftest import Cpln, Run
from tests.compat.test_cli_containers import FAST_CLOCK, ok, write_stack
from tests.compat.test_dataplane import Terminal
from tests.support.containers import INDEX, SERVE, ContainerKit
from tests.support.runtime_server import RuntimeServer, serving_runtime, wait_for

LOCATION = "aws-us-east-2"
KiB = 1024


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def runtime(
    request: pytest.FixtureRequest,
    cpln_bin: Path,
    test_docker: ContainerKit,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RuntimeServer]:
    """``plinth serve --runtime containers --container-engine docker`` on each store."""
    with serving_runtime(request.param, tmp_path_factory.mktemp("docker-engine"), test_docker) as server:
        yield server


@dataclass
class Docked:
    """The module's server on docker, a GVC of the test's own, and the official CLI."""

    runtime: RuntimeServer
    gvc: str
    cpln_bin: Path
    home: Path
    clock: Path

    @property
    def org(self) -> str:
        return self.runtime.org

    def runner(self) -> Cpln:
        return Cpln(self.cpln_bin, self.home, self.runtime.api.url, self.runtime.api.key)

    def args(self, *args: str) -> tuple[str, ...]:
        """``args`` with the server, key, org (and GVC) flags, before any ``--``."""
        server = self.runtime.api
        auth = ["--endpoint", server.url, "--token", server.key, "--org", self.org]
        if args[0] not in ("apply", "logs"):
            auth += ["--gvc", self.gvc]
        at = args.index("--") if "--" in args else len(args)
        return (*args[:at], *auth, *args[at:])

    def cpln(self, *args: str, stdin: str = "", fast_clock: bool = False) -> Run:
        env = {"NODE_OPTIONS": f"--require={self.clock}"} if fast_clock else None
        return self.runner().raw(*self.args(*args), stdin=stdin, env=env)

    def apply_workload(self, name: str, tmp_path: Path, **container: Any) -> None:
        """``cpln apply --ready`` of the GVC and a workload of one replica of the test image."""
        main = {"name": "main", "image": self.runtime.kit.image, "ports": [{"number": 8080, "protocol": "http"}]}
        spec = {
            "type": "standard",
            "containers": [{**main, **container}],
            "defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 1}},
            "firewallConfig": {"external": {"inboundAllowCIDR": ["127.0.0.1/32"]}},
        }
        stack = write_stack(tmp_path / f"{name}.yaml", self.gvc, {"kind": "workload", "name": name, "spec": spec})
        ok(self.cpln("apply", "--file", str(stack), "--ready", fast_clock=True))

    def api_get(self, path: str) -> Any:
        with self.runtime.api.client() as api:
            answer = api.get(f"/org/{self.org}{path}")
            assert answer.status_code == 200, answer.text
            return answer.json()

    def running(self, workload: str) -> dict[str, str]:
        found = self.runtime.containers(**{"plinth.gvc": self.gvc, "plinth.workload": workload})
        return {c["Names"][0]: c["Id"] for c in found if c["State"] == "running"}

    def exec_where(self) -> tuple[str, ...]:
        return ("--location", LOCATION, "--replica", "web-0", "--container", "main")


@pytest.fixture
def docked(
    runtime: RuntimeServer, cpln_bin: Path, cpln_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Docked]:
    clock = tmp_path_factory.mktemp("fast-clock") / "fast-clock.js"
    clock.write_text(FAST_CLOCK)
    if runtime.server is None or runtime.server.process.poll() is not None:
        runtime.start()  # a test that stopped it and failed before starting it again
    made = Docked(runtime, f"g{uuid.uuid4().hex[:8]}", cpln_bin, cpln_home, clock)
    yield made
    runtime.delete_gvc(made.gvc)


def test_apply_ready_serves_through_the_gateway_and_the_api_reports_it(docked: Docked, tmp_path: Path) -> None:
    docked.apply_workload("web", tmp_path)
    item = docked.api_get(f"/gvc/{docked.gvc}/workload/web")
    assert item["status"]["ready"] is True, item["status"]
    deployment = docked.api_get(f"/gvc/{docked.gvc}/workload/web/deployment/{LOCATION}")["status"]
    assert deployment["lastProcessedVersion"] == item["version"] and deployment["ready"] is True
    alias = docked.api_get(f"/gvc/{docked.gvc}")["alias"]
    answer = docked.runtime.gateway_get(f"web-{alias}.localhost")
    assert answer is not None and answer.status_code == 200 and answer.content == INDEX
    [container] = docked.runtime.containers(**{"plinth.gvc": docked.gvc, "plinth.workload": "web"})
    labels = container["Labels"]
    assert (labels["plinth.managed"], labels["plinth.org"], labels["plinth.location"]) == ("true", docked.org, LOCATION)
    inspected = docked.runtime.kit.cli(
        "container", "inspect", "--format", "{{.HostConfig.LogConfig.Type}}", container["Id"]
    )
    assert inspected.stdout.strip() == "json-file"  # the file the log collector reads


def test_exec_gives_output_and_exit_code_streams_stdin_and_cp_copies_both_ways(docked: Docked, tmp_path: Path) -> None:
    docked.apply_workload("web", tmp_path)
    where = docked.exec_where()
    three = docked.cpln("workload", "exec", "web", *where, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert three.code == 3, three
    assert "out" in three.stdout and "err" in three.stdout + three.stderr
    lines = "".join(f"line {i}\n" for i in range(500))
    counted = ok(docked.cpln("workload", "exec", "web", *where, "--stdin", "--", "wc", "-l", stdin=lines))
    assert counted.stdout.strip() == "500"

    upload = tmp_path / "up.bin"
    upload.write_bytes(os.urandom(512 * KiB))
    ok(docked.cpln("cp", str(upload), "web:/tmp/up.bin", *where))
    [name] = docked.running("web")
    inside = docked.runtime.kit.cli("exec", name, "sha256sum", "/tmp/up.bin").stdout.split()[0]
    assert inside == hashlib.sha256(upload.read_bytes()).hexdigest()
    docked.runtime.kit.cli("exec", name, "dd", "if=/dev/urandom", "of=/tmp/down.bin", "bs=1024", "count=300")
    expected = docked.runtime.kit.cli("exec", name, "sha256sum", "/tmp/down.bin").stdout.split()[0]
    download = tmp_path / "down.bin"
    ok(docked.cpln("cp", "web:tmp/down.bin", str(download), *where))  # relative: busybox tar (test_dataplane.py)
    assert hashlib.sha256(download.read_bytes()).hexdigest() == expected


def test_connect_runs_a_shell_on_a_terminal(docked: Docked, tmp_path: Path) -> None:
    docked.apply_workload("web", tmp_path)
    argv = [str(docked.cpln_bin), *docked.args("workload", "connect", "web", *docked.exec_where(), "--shell", "sh")]
    term = Terminal(argv, docked.runner().environ(), 30, 100)
    try:
        # As a user does, after the prompt: docker's client sets the terminal's size just after
        # the shell starts, so a line typed ahead can run while it is still 0 by 0.
        term.expect("/ # ")
        term.type("stty size; echo size-$((6*7))\r")
        term.expect("30 100")
        term.expect("size-42")
        term.type("exit\r")
    finally:
        code = term.close()
    assert code == 0


def test_logs_read_what_the_containers_wrote_by_stream(docked: Docked, tmp_path: Path) -> None:
    marker = uuid.uuid4().hex[:10]
    script = f"echo {marker}-out; echo {marker}-err >&2; {SERVE}"
    docked.apply_workload("talker", tmp_path, command="/bin/sh", args=["-c", script])
    selector = f'{{gvc="{docked.gvc}", workload="talker"}}'

    def shown(query: str, wanted: int) -> list[str] | None:
        found = [line for line in ok(docked.cpln("logs", query, "-o", "raw")).stdout.splitlines() if marker in line]
        return found if len(found) >= wanted else None

    both = wait_for(lambda: shown(f'{selector} |= "{marker}"', 2), "both lines through cpln logs")
    assert sorted(both) == [f"{marker}-err", f"{marker}-out"]
    errors = shown(f'{{gvc="{docked.gvc}", workload="talker", stream="stderr"}} |= "{marker}"', 1)
    assert errors == [f"{marker}-err"]


def test_replica_stop_replaces_the_replica(docked: Docked, tmp_path: Path) -> None:
    docked.apply_workload("web", tmp_path)
    [old_id] = docked.running("web").values()
    ok(docked.cpln("workload", "replica", "stop", "web", "--location", LOCATION, "--replica-name", "web-0"))
    wait_for(
        lambda: (ids := list(docked.running("web").values())) and old_id not in ids,
        "web-0 replaced by a new container",
    )


def test_a_restart_adopts_what_runs_and_collects_a_workload_deleted_while_down(docked: Docked, tmp_path: Path) -> None:
    runtime = docked.runtime
    docked.apply_workload("kept", tmp_path)
    docked.apply_workload("dropped", tmp_path)
    kept = docked.running("kept")
    runtime.stop()  # SIGTERM: the containers stay
    runtime.start("--no-controller")  # the API alone: the delete reaches no engine
    with runtime.api.client() as api:
        gone = api.delete(f"/org/{docked.org}/gvc/{docked.gvc}/workload/dropped")
        assert gone.status_code in (202, 204), gone.text
    runtime.stop()
    assert docked.running("dropped"), "nothing removed it while no controller ran"
    runtime.start()
    wait_for(lambda: not docked.running("dropped"), "the orphan removed by the new controller")
    assert docked.running("kept") == kept  # adopted: the same container, never restarted
    alias = docked.api_get(f"/gvc/{docked.gvc}")["alias"]
    runtime.wait_gateway(f"kept-{alias}.localhost")


def test_secrets_reach_env_and_files_on_a_tmpfs_that_goes_with_the_workload(docked: Docked) -> None:
    runtime, org, gvc = docked.runtime, docked.org, docked.gvc
    value = "p-" + uuid.uuid4().hex[:8]
    secret = f"s{gvc}"
    identity = f"//gvc/{gvc}/identity/app"
    main = {
        "name": "main",
        "image": runtime.kit.image,
        "ports": [{"number": 8080}],
        "env": [{"name": "PASS", "value": f"cpln://secret/{secret}.pass"}],
        "volumes": [{"uri": f"cpln://secret/{secret}", "path": "/etc/app"}],
    }
    scale = {"autoscaling": {"minScale": 1, "maxScale": 1}}
    spec = {"type": "standard", "containers": [main], "defaultOptions": scale, "identityLink": identity}
    with runtime.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        reveal = {"permissions": ["reveal"], "principalLinks": [identity]}
        policy = {"name": f"reveal-{gvc}", "targetKind": "secret", "targetLinks": [f"//secret/{secret}"]}
        writes = [
            (f"/org/{org}/gvc", {"name": gvc, "spec": placement}),
            (f"/org/{org}/gvc/{gvc}/identity", {"name": "app"}),
            (f"/org/{org}/secret", {"name": secret, "type": "dictionary", "data": {"pass": value}}),
            (f"/org/{org}/policy", {**policy, "bindings": [reveal]}),
            (f"/org/{org}/gvc/{gvc}/workload", {"name": "vault", "spec": spec}),
        ]
        for path, body in writes:
            made = api.post(path, json=body)
            assert made.status_code == 201, made.text

    [name] = wait_for(lambda: docked.running("vault") or None, "vault running").keys()
    # The environment's value travels in the docker client's environment, never its argv; the
    # files are on a tmpfs of the host, bind-mounted read-only (docs/runtime.md).
    assert runtime.kit.cli("exec", name, "sh", "-c", 'printf %s "$PASS"').stdout == value
    assert runtime.kit.cli("exec", name, "cat", "/etc/app/pass").stdout == value
    folder = TmpfsSecrets().directory(name)
    [inspected] = json.loads(runtime.kit.cli("container", "inspect", name).stdout)
    del inspected["Config"]["Env"]  # where an environment value lives, with any engine
    assert folder.is_dir() and value not in json.dumps(inspected)  # the file's value: nowhere but the tmpfs
    with runtime.api.client() as api:
        assert api.delete(f"/org/{org}/gvc/{gvc}/workload/vault").status_code == 202
    wait_for(lambda: not docked.running("vault") and not folder.exists(), "the replica and its secret files gone")


def test_workloads_of_a_gvc_reach_each_other_by_internal_name(docked: Docked, tmp_path: Path) -> None:
    docked.apply_workload("api", tmp_path)
    docked.apply_workload("caller", tmp_path)
    internal = docked.api_get(f"/gvc/{docked.gvc}/workload/api")["status"]["internalName"]
    [caller] = docked.running("caller")
    fetch = ["exec", caller, "wget", "-q", "-O-", f"http://{internal}:8080/"]
    # Running is not yet listening: the answer is awaited (bounded), never a timing.
    wait_for(
        lambda: docked.runtime.kit.cli(*fetch, check=False).stdout.encode() == INDEX,
        f"{internal} answering from inside the caller",
    )
    network = f"plinth_{docked.org}_{docked.gvc}"
    inspected = docked.runtime.kit.cli("network", "inspect", "--format", "{{json .Labels}}", network)
    assert '"plinth.managed":"true"' in inspected.stdout


def test_cron_start_runs_the_job_to_its_exit_code(docked: Docked) -> None:
    runtime = docked.runtime
    with runtime.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        assert api.post(f"/org/{docked.org}/gvc", json={"name": docked.gvc, "spec": placement}).status_code == 201
        container = {"name": "main", "image": runtime.kit.image, "command": "sh", "args": ["-c", "echo ran; exit 4"]}
        spec = {"type": "cron", "job": {"schedule": "0 3 * * *", "restartPolicy": "Never"}, "containers": [container]}
        made = api.post(f"/org/{docked.org}/gvc/{docked.gvc}/workload", json={"name": "nightly", "spec": spec})
        assert made.status_code == 201, made.text
    ok(docked.cpln("workload", "cron", "start", "nightly", "--location", LOCATION))

    def executed() -> list[dict[str, Any]] | None:
        status = docked.api_get(f"/gvc/{docked.gvc}/workload/nightly/deployment/{LOCATION}")["status"]
        done = [e for e in status.get("jobExecutions") or [] if e.get("status") in ("successful", "failed")]
        return done or None

    [execution] = wait_for(executed, "the job's execution finished in the deployment")
    assert execution["status"] == "failed", execution  # exit 4, read from docker's ps text
    ran = runtime.containers(**{"plinth.gvc": docked.gvc, "plinth.workload": "nightly"})
    assert ran and all(c["State"] == "exited" and c["ExitCode"] == 4 for c in ran), ran
