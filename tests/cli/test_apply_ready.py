"""``plinth apply --ready`` (issue 22): it returns only once every applied workload is ready at
its latest version, as ``cpln apply --ready`` decides it, and fails after ``--ready-timeout``
naming the workloads not ready and why.

The server runs ``--runtime containers --no-controller`` on both stores, and the test plays the
runtime controller: it posts observations as ``tests/api/test_runtime_reports.py`` does, so
readiness is whatever the test reports (no containers here; ``tests/compat/test_cli_containers.py``
runs it for real). The rule itself (``plinth.cli.ready.health``) is checked on documents first.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from plinth.cli.ready import POLL_MIN_S, POLL_S, health, poll_after
from tests.api.conftest import BACKENDS
from tests.cli.conftest import SRC, PlinthCli
from tests.support.server import ServerProcess, serving

ORG = "acme"
LOCATION = "aws-us-east-1"
WAIT_S = 60


# --- The rule, on documents -------------------------------------------------------------------


def workload(version: int = 2, **spec: Any) -> dict[str, Any]:
    return {"version": version, "spec": {"type": "standard", **spec}, "status": {}}


def deployment(name: str, processed: int, expected: int, ready: bool, **status: Any) -> dict[str, Any]:
    versions = [{"workload": expected, "ready": ready}]
    body = {"ready": ready, "internal": {}, "lastProcessedVersion": processed, "expectedDeploymentVersion": expected}
    return {"name": name, "status": {**body, "versions": versions, **status}}


def test_ready_at_the_latest_version_in_every_location() -> None:
    assert health(workload(), [deployment("a", 2, 2, True), deployment("b", 2, 2, True)]).latest is True
    # One location still at the old version: ready, not at the latest, and it says where.
    behind = health(workload(), [deployment("a", 2, 2, True), deployment("b", 1, 2, True)])
    assert (behind.ready, behind.latest) == (True, False)
    assert behind.reason == "b: version 2 not deployed yet (at 1)"
    failing = health(workload(), [deployment("a", 2, 2, False, message="image missing: x")])
    assert (failing.ready, failing.latest, failing.reason) == (False, False, "a: image missing: x")
    synced = deployment("a", 2, 2, True, internal={"syncFailed": True})
    assert health(workload(), [synced]).ready is False


def test_no_deployment_is_not_ready_and_suspended_locations_do_not_count() -> None:
    assert health(workload(), []) == health(workload(), [])
    assert health(workload(), []).ready is False
    suspended = workload(localOptions=[{"location": "b", "suspend": True}])
    assert health(suspended, [deployment("a", 2, 2, True), deployment("b", 0, 2, False)]).latest is True
    zero = workload(localOptions=[{"location": "b", "autoscaling": {"minScale": 0, "maxScale": 0}}])
    assert health(zero, [deployment("a", 2, 2, True), deployment("b", 0, 2, False)]).latest is True
    # A cron workload is ready at its latest version once any location is ready (the CLI's rule).
    cron = workload(type="cron")
    assert health(cron, [deployment("a", 1, 2, True)]).latest is True


# --- Against a server, the test reporting as the controller ---------------------------------


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    args = ("--runtime", "containers", "--no-controller")  # the tests post as the controller would
    with serving(request.param, tmp_path_factory.mktemp("apply-ready"), args) as proc:
        yield proc


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def gvc(request: pytest.FixtureRequest) -> str:
    return "r" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]


@pytest.fixture
def cli(server: ServerProcess, tmp_path: Path) -> PlinthCli:
    return PlinthCli(home=tmp_path, endpoint=server.url, token=server.key)


def stack(tmp_path: Path, gvc: str, image: str = "nginx:1", names: tuple[str, ...] = ("web",)) -> Path:
    documents = [f"kind: gvc\nname: {gvc}\nspec:\n  staticPlacement:\n    locationLinks: [//location/{LOCATION}]\n"]
    for name in names:
        documents.append(
            f"kind: workload\nname: {name}\ngvc: {gvc}\nspec:\n  type: standard\n"
            f"  containers: [{{name: app, image: '{image}'}}]\n"
            "  defaultOptions: {autoscaling: {minScale: 1, maxScale: 1}}\n"
        )
    path = tmp_path / "stack.yaml"
    path.write_text("---\n".join(documents))
    return path


def report(api: httpx.Client, gvc: str, name: str, version: int, ready: bool, message: str = "") -> None:
    """Post what a controller would: one replica running ``version``'s template."""
    template = f"t{version}"
    container = {"name": "app", "image": "nginx:1", "ready": ready, "restarts": 0, "message": message}
    replica = {"name": f"{name}-0", "template": template, "ready": ready, "restarts": 0, "message": message}
    observation = {
        "gvc": gvc,
        "name": name,
        "planned": version,
        "versions": {template: version},
        "locations": [{"name": LOCATION, "replicas": [{**replica, "containers": [container]}]}],
        **({"message": message} if message else {}),
    }
    posted = api.post(f"/org/{ORG}/-runtime/observations", json={"workloads": [observation]})
    assert posted.status_code == 200, posted.text


def start_apply(cli: PlinthCli, manifest: Path, *extra: str) -> subprocess.Popen[str]:
    """``plinth apply -f manifest --ready`` in the background (the test reports meanwhile)."""
    argv = [sys.executable, "-m", "plinth", "apply", "-f", str(manifest), "--org", ORG, "--ready", *extra]
    argv += ["--endpoint", str(cli.endpoint), "--token", str(cli.token)]
    env = cli.environ({"PYTHONPATH": SRC})
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"plinth apply --ready still running after {WAIT_S} s:\n{out}{err}") from None
    return process.returncode, out, err


def deployment_reads(server: ServerProcess, gvc: str, name: str) -> int:
    """How many times the server was asked for the workload's deployments (its access log)."""
    path = f"/org/{ORG}/gvc/{gvc}/workload/{name}/deployment"
    return sum(1 for line in server.log_lines() if f'"{path}"' in line or f"{path} " in line)


def wait_polled(server: ServerProcess, process: subprocess.Popen[str], gvc: str, name: str, after: int = 0) -> None:
    """Until the waiting CLI has read the workload's deployments (it is past its writes, checking)."""
    deadline = time.monotonic() + WAIT_S
    while deployment_reads(server, gvc, name) <= after:
        if process.poll() is not None:
            raise AssertionError(f"plinth apply --ready ended before it checked:\n{finish(process)}")
        assert time.monotonic() < deadline, f"timed out after {WAIT_S} s waiting for apply --ready to check {name}"
        time.sleep(0.1)


def test_it_returns_only_once_the_runtime_reports_the_workloads_ready(
    server: ServerProcess, api: httpx.Client, cli: PlinthCli, gvc: str, tmp_path: Path
) -> None:
    process = start_apply(cli, stack(tmp_path, gvc, names=("web", "api")))
    try:
        wait_polled(server, process, gvc, "web")
        report(api, gvc, "web", 1, ready=True)
        seen = deployment_reads(server, gvc, "api")
        wait_polled(server, process, gvc, "api", after=seen)  # a round after web's report
        assert process.poll() is None, "returned with api not reported ready"
        report(api, gvc, "api", 1, ready=True)
    finally:
        code, out, err = finish(process)
    assert code == 0, err
    assert f"gvc/{gvc}/workload/web ready" in out.splitlines()
    assert f"gvc/{gvc}/workload/api ready" in out.splitlines()
    assert out.index(f"gvc/{gvc}/workload/api created") < out.index(f"gvc/{gvc}/workload/api ready")


def test_a_new_version_is_not_ready_while_the_old_one_serves(
    server: ServerProcess, api: httpx.Client, cli: PlinthCli, gvc: str, tmp_path: Path
) -> None:
    first = cli("apply", "-f", str(stack(tmp_path, gvc)), "--org", ORG)
    assert first.code == 0, first.stderr
    report(api, gvc, "web", 1, ready=True)
    again = cli("apply", "-f", str(stack(tmp_path, gvc)), "--org", ORG, "--ready")  # unchanged: ready now
    assert again.code == 0 and f"gvc/{gvc}/workload/web ready" in again.stdout, again.stderr
    process = start_apply(cli, stack(tmp_path, gvc, image="nginx:2"))
    try:
        seen = deployment_reads(server, gvc, "web")
        wait_polled(server, process, gvc, "web", after=seen)
        assert process.poll() is None, "returned while only version 1 ran"
        report(api, gvc, "web", 2, ready=True)
    finally:
        code, _, err = finish(process)
    assert code == 0, err


def test_it_fails_after_the_timeout_naming_the_workload_and_why(
    api: httpx.Client, cli: PlinthCli, gvc: str, tmp_path: Path
) -> None:
    manifest = stack(tmp_path, gvc, image="localhost/nope:1", names=("web", "good"))
    assert cli("apply", "-f", str(manifest), "--org", ORG).code == 0
    report(api, gvc, "good", 1, ready=True)
    report(api, gvc, "web", 1, ready=False, message="image missing: localhost/nope:1: pull refused")
    failed = cli("apply", "-f", str(manifest), "--org", ORG, "--ready", "--ready-timeout", "1")
    assert failed.code == 1, failed.stdout + failed.stderr
    assert "Not ready after 1 s: 1 of 2 workloads" in failed.stderr
    assert f"gvc/{gvc}/workload/web: {LOCATION}: image missing: localhost/nope:1: pull refused" in failed.stderr
    assert "workload/good:" not in failed.stderr and " ready" not in failed.stdout


def test_a_workload_never_reported_says_it_waits_for_the_controller(cli: PlinthCli, gvc: str, tmp_path: Path) -> None:
    failed = cli("apply", "-f", str(stack(tmp_path, gvc)), "--org", ORG, "--ready", "--ready-timeout", "0")
    assert failed.code == 1
    assert f"gvc/{gvc}/workload/web: {LOCATION}: waiting for the runtime controller" in failed.stderr


def test_ready_with_dry_run_or_a_timeout_alone_is_a_usage_error(cli: PlinthCli, gvc: str, tmp_path: Path) -> None:
    refused = cli("apply", "-f", str(stack(tmp_path, gvc)), "--org", ORG, "--ready", "--dry-run")
    assert refused.code == 2 and "--dry-run applies nothing" in refused.stderr
    alone = cli("apply", "-f", str(stack(tmp_path, gvc)), "--org", ORG, "--ready-timeout", "5")
    assert alone.code == 2 and "give --ready too" in alone.stderr


def test_the_pause_between_checks_is_a_twentieth_of_the_wait_within_its_bounds() -> None:
    """``--ready`` asks often at first (a workload ready within a second is seen soon after its
    report) and no more often than every 0.25 s on a long wait (docs/cli.md)."""
    assert poll_after(0) == POLL_MIN_S
    assert poll_after(1.0) == pytest.approx(0.05)
    assert poll_after(4.0) == pytest.approx(0.2)
    assert poll_after(60) == POLL_S == 0.25
    pauses = [poll_after(t / 10) for t in range(100)]
    assert pauses == sorted(pauses)  # never shorter as the wait grows
