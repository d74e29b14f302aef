"""``cpln workload cron run`` (the official CLI, pinned, unchanged) against ``plinth serve
--runtime containers``: a command run as a job in a container of its own, its lifecycle
(``pending -> running -> completed | failed``) deciding the CLI's exit code, its output in the
run container's logs, its execution in ``jobExecutions``, and ``cron run -i``, a shell in the
running job (docs/runtime.md, "Commands" and "The data plane"), on both stores.

One server per module and store, and a GVC of the module's own in which the CLI makes its runner
workload (``cpln-run-...``, a suspended cron workload) on first use; the test image stands in
for the CLI's default ``ubuntu:latest`` (no registry is reachable here).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.compat.test_dataplane import LOCATION, Plane, Terminal, ok
from tests.support.containers import podman
from tests.support.runtime_server import RuntimeServer, wait_for


@pytest.fixture(scope="module")
def plane(runtime: RuntimeServer, cpln_bin: Path, cpln_home: Path) -> Iterator[Plane]:
    gvc = f"g{uuid.uuid4().hex[:8]}"
    base = f"/org/{runtime.org}/gvc"
    with runtime.api.client() as api:
        placement = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        assert api.post(base, json={"name": gvc, "spec": placement}).status_code == 201
    yield Plane(runtime, gvc, cpln_bin, cpln_home)
    with runtime.api.client() as api:
        for workload in api.get(f"{base}/{gvc}/workload").json()["items"]:
            api.delete(f"{base}/{gvc}/workload/{workload['name']}")
        api.delete(f"{base}/{gvc}")


def cron_run(plane: Plane, *command: str) -> tuple[int, dict[str, object]]:
    """``cron run`` of ``command`` (waiting for its end): the CLI's exit code and its result."""
    where = ("--location", LOCATION, "--image", plane.runtime.kit.image, "-o", "json")
    run = plane.cpln("workload", "cron", "run", *where, "--", *command)
    result = run.json()
    assert isinstance(result, dict), run
    return run.code, result


def run_container(plane: Plane, command_id: str) -> str:
    found = plane.runtime.containers(**{"plinth.job-replica": f"command-{command_id}"})
    assert len(found) == 1, found
    return str(found[0]["Names"][0])


def execution(plane: Plane, workload: str, command_id: str) -> dict[str, object]:
    path = f"/org/{plane.org}/gvc/{plane.gvc}/workload/{workload}/deployment/{LOCATION}"

    def reported() -> dict[str, object] | None:
        with plane.api() as api:
            executions = api.get(path).json()["status"].get("jobExecutions") or []
        done = [e for e in executions if e["name"] == f"command-{command_id}" and e["status"] != "active"]
        return done[0] if done else None

    return wait_for(reported, f"the execution of command {command_id} reported finished")


def test_a_succeeding_command_completes_and_its_output_is_in_the_run_logs(plane: Plane) -> None:
    marker = f"out-{uuid.uuid4().hex[:8]}"
    code, result = cron_run(plane, "sh", "-c", f"echo {marker}; echo to-stderr >&2")
    assert code == 0, result
    assert result["status"] == "completed" and result["location"] == LOCATION
    command_id, workload = str(result["commandId"]), str(result["workload"])
    assert workload.startswith("cpln-run-")
    logs = podman("logs", run_container(plane, command_id))
    assert marker in logs.stdout and "to-stderr" in logs.stderr
    with plane.api() as api:
        command = api.get(f"/org/{plane.org}/gvc/{plane.gvc}/workload/{workload}/-command/{command_id}").json()
    assert command["lifecycleStage"] == "completed"
    assert execution(plane, workload, command_id)["status"] == "successful"


def test_a_failing_command_fails_and_the_cli_exits_1(plane: Plane) -> None:
    code, result = cron_run(plane, "sh", "-c", "echo about-to-fail; exit 3")
    assert code == 1, result
    assert result["status"] == "failed"
    command_id, workload = str(result["commandId"]), str(result["workload"])
    assert "about-to-fail" in podman("logs", run_container(plane, command_id)).stdout
    assert execution(plane, workload, command_id)["status"] == "failed"


def test_runs_reuse_the_runner_workload_and_each_runs_its_own_command(plane: Plane) -> None:
    first = cron_run(plane, "true")[1]
    second = cron_run(plane, "true")[1]
    assert first["workload"] == second["workload"]
    assert first["commandId"] != second["commandId"]


def test_cron_run_interactive_opens_a_shell_in_the_running_job(plane: Plane) -> None:
    marker = uuid.uuid4().hex[:8]
    where = ("--location", LOCATION, "--image", plane.runtime.kit.image, "--shell", "sh")
    # The job's own command keeps its container running; the CLI opens its shell beside it.
    argv = plane.argv("workload", "cron", "run", "-i", *where, "--", "sh", "-c", f"echo {marker} > /tmp/job; sleep 300")
    term = Terminal(argv, plane.cli().environ(), 24, 80)
    try:
        term.expect("#", timeout=90)  # the shell's prompt
        term.type("cat /tmp/job; echo sum-$((6*7))\r")
        term.expect("sum-42")
        term.type("exit\r")
    finally:
        code = term.close()
    assert code == 0, term.seen[-2000:]
    # The shell ran in the job's own container: it read what the job's command wrote.
    assert marker.encode() in term.seen.split(b"cat /tmp/job", 1)[1]


def test_the_run_is_listed_as_a_replica_named_after_its_command(plane: Plane) -> None:
    where = ("--location", LOCATION, "--image", plane.runtime.kit.image, "--background", "-o", "json")
    started = ok(plane.cpln("workload", "cron", "run", *where, "--", "sleep", "300")).json()
    assert isinstance(started, dict) and started["status"] == "started"
    command_id, workload = str(started["commandId"]), str(started["workload"])

    def listed() -> list[str] | None:
        run = plane.cpln("workload", "get-replicas", workload, "--location", LOCATION, "-o", "json")
        items = run.json()["items"] if run.code == 0 else []  # type: ignore[index]
        return [i for i in items if command_id in i] or None

    assert wait_for(listed, "the run listed as a replica") == [f"command-{command_id}"]
    base = f"/org/{plane.org}/gvc/{plane.gvc}/workload/{workload}"
    with plane.api() as api:
        # Its container runs, so the command moves to running and its execution is active. The
        # listing reads the engine, and the controller reports the stage after it started the
        # container: the stage may come a moment after the listing.
        def stage() -> str | None:
            found = str(api.get(f"{base}/-command/{command_id}").json()["lifecycleStage"])
            return found if found != "pending" else None

        assert wait_for(stage, "the command's stage after pending") == "running"

        def active() -> dict[str, object] | None:
            status = api.get(f"{base}/deployment/{LOCATION}").json()["status"]
            found = [e for e in status.get("jobExecutions") or [] if e["name"] == f"command-{command_id}"]
            return found[0] if found else None

        reported = wait_for(active, "the run in jobExecutions")
    assert (reported["status"], reported["replica"]) == ("active", f"command-{command_id}")
    inside = ("--location", LOCATION, "--replica", f"command-{command_id}", "--container", "main")
    shown = ok(plane.cpln("workload", "exec", workload, *inside, "--", "echo", "inside-the-run"))
    assert "inside-the-run" in shown.stdout
