"""``--runtime containers``: a workload's status and deployments follow what the runtime
controller posts to ``POST /org/{org}/-runtime/observations`` (docs/runtime.md), on both
stores. The controller is played by the test, with the server-admin key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.authz_support import ok, service_account_with_key
from tests.api.conftest import BACKENDS
from tests.support.server import serving

LOCATIONS = ["//location/aws-us-east-1"]
REPORT = "/org/acme/-runtime/observations"


@pytest.fixture(scope="module", params=BACKENDS)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    args = ("--runtime", "containers", "--no-controller")  # the tests post as the controller would
    with serving(request.param, tmp_path_factory.mktemp("observed"), args) as proc, proc.client() as client:
        yield client


@pytest.fixture
def gvc(api: httpx.Client, request: pytest.FixtureRequest) -> str:
    import hashlib

    name = "g" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:12]
    body = {"name": name, "spec": {"staticPlacement": {"locationLinks": LOCATIONS}}}
    ok(api.post("/org/acme/gvc", json=body), 201)
    return name


def make_workload(api: httpx.Client, gvc: str, name: str = "web", replicas: int = 2) -> dict[str, Any]:
    spec = {
        "containers": [{"name": "app", "image": "nginx:1"}],
        "defaultOptions": {"autoscaling": {"minScale": replicas, "maxScale": 3}},
    }
    return ok(api.post(f"/org/acme/gvc/{gvc}/workload", json={"name": name, "spec": spec}), 201)  # type: ignore[no-any-return]


def replica(name: str, template: str, ready: bool, restarts: int = 0, message: str = "") -> dict[str, Any]:
    container = {"name": "app", "image": "nginx:1", "ready": ready, "restarts": restarts, "message": message}
    return {
        "name": name,
        "template": template,
        "ready": ready,
        "restarts": restarts,
        "message": message,
        "containers": [container],
    }


def observation(gvc: str, replicas: list[dict[str, Any]], versions: dict[str, int], planned: int, **more: Any) -> Any:
    return {
        "gvc": gvc,
        "name": "web",
        "planned": planned,
        "versions": versions,
        "locations": [{"name": "aws-us-east-1", "replicas": replicas}],
        **more,
    }


def post(api: httpx.Client, *observations: Any) -> Any:
    return ok(api.post(REPORT, json={"workloads": list(observations)}))


def deployment(api: httpx.Client, gvc: str) -> Any:
    return ok(api.get(f"/org/acme/gvc/{gvc}/workload/web/deployment/aws-us-east-1"))["status"]


def status(api: httpx.Client, gvc: str) -> Any:
    return ok(api.get(f"/org/acme/gvc/{gvc}/workload/web"))["status"]


def test_before_any_report_nothing_is_ready(api: httpx.Client, gvc: str) -> None:
    made = make_workload(api, gvc)
    assert made["status"]["ready"] is False
    assert made["status"]["healthCheck"]["message"] == "waiting for the runtime controller"
    shown = deployment(api, gvc)
    assert shown["ready"] is False and shown["lastProcessedVersion"] == 0
    assert shown["message"] == "waiting for the runtime controller"


def test_only_a_server_admin_may_report(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc)
    key = service_account_with_key(api, "acme", f"{gvc}-sa")
    body = {"workloads": [observation(gvc, [replica("web-0", "t1", True)], {"t1": 1}, 1)]}
    refused = api.post(REPORT, json=body, headers={"Authorization": f"Bearer {key}"})
    assert refused.status_code == 403, refused.text
    assert status(api, gvc)["ready"] is False  # nothing stored


def test_a_bad_report_names_every_path_and_stores_nothing(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc)
    good = observation(gvc, [replica("web-0", "t1", True), replica("web-1", "t1", True)], {"t1": 1}, 1)
    bad = {"gvc": gvc, "name": 7, "planned": -1, "locations": [{"replicas": [{"name": "web-0"}]}]}
    refused = api.post(REPORT, json={"workloads": [good, bad]})
    assert refused.status_code == 400, refused.text
    paths = {e["path"] for e in refused.json()["details"]["errors"]}
    assert {
        "workloads[1].name",
        "workloads[1].planned",
        "workloads[1].locations[0].name",
        "workloads[1].locations[0].replicas[0].template",
    } <= paths, paths
    assert status(api, gvc)["ready"] is False  # not even the good one
    assert api.post(REPORT, json=[1]).status_code == 400


def test_status_and_deployment_follow_reports_through_a_rollout(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc)
    # Running, not yet ready: processed, not ready, with the replica's reason.
    starting = [replica("web-0", "a0", False, message="readiness probe failing: 503"), replica("web-1", "a1", True)]
    assert post(api, observation(gvc, starting, {"a0": 1, "a1": 1}, 1))["stored"] == [f"{gvc}/web"]
    shown = deployment(api, gvc)
    assert shown["lastProcessedVersion"] == 1 and shown["ready"] is False
    assert shown["message"] == "readiness probe failing: 503"
    assert status(api, gvc)["healthCheck"]["message"] == "readiness probe failing: 503"
    # Both ready: the workload is.
    v1 = [replica("web-0", "a0", True), replica("web-1", "a1", True, restarts=2)]
    post(api, observation(gvc, v1, {"a0": 1, "a1": 1}, 1))
    now = status(api, gvc)
    assert now["ready"] is True and now["currentReplicaCount"] == 2 and now["healthCheck"]["success"] is True
    shown = deployment(api, gvc)
    assert shown["ready"] is True and shown["message"] == ""
    [entry] = shown["versions"]
    assert entry["workload"] == 1 and entry["ready"] is True
    assert entry["containers"]["app"]["restarts"]["count"] == 2
    assert entry["containers"]["app"]["resources"]["replicasReady"] == 2

    # A new version: not processed until its replicas run it.
    patched = ok(api.patch(f"/org/acme/gvc/{gvc}/workload/web", json={"description": "the second version"}))
    assert patched["version"] == 2 and patched["status"]["ready"] is False
    shown = deployment(api, gvc)
    assert shown["lastProcessedVersion"] == 1 and shown["expectedDeploymentVersion"] == 2
    # Mid-rollout: one new replica beside the two old ones, both versions side by side.
    rolling = [*v1, replica("web-0", "b0", True)]
    post(api, observation(gvc, rolling, {"b0": 2, "b1": 2}, 2))  # a0, a1 kept from the stored map
    shown = deployment(api, gvc)
    assert [(v["workload"], v["ready"]) for v in shown["versions"]] == [(2, False), (1, True)]
    assert shown["lastProcessedVersion"] == 1 and shown["ready"] is False
    assert status(api, gvc)["ready"] is False
    # Done: only the new ones.
    post(api, observation(gvc, [replica("web-0", "b0", True), replica("web-1", "b1", True)], {"b0": 2, "b1": 2}, 2))
    shown = deployment(api, gvc)
    assert shown["lastProcessedVersion"] == 2 and shown["ready"] is True
    assert [v["workload"] for v in shown["versions"]] == [2]
    assert status(api, gvc)["ready"] is True


def test_a_crash_loop_says_why(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc, replicas=1)
    crashing = replica("web-0", "c0", False, restarts=3, message="crash loop: exit code 3")
    post(api, observation(gvc, [crashing], {"c0": 1}, 1, message="crash loop: exit code 3"))
    now = status(api, gvc)
    assert now["ready"] is False and now["healthCheck"]["message"] == "crash loop: exit code 3"
    shown = deployment(api, gvc)
    assert shown["message"] == "crash loop: exit code 3"
    assert shown["versions"][0]["containers"]["app"]["restarts"]["count"] == 3


def test_an_unchanged_report_writes_nothing(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc, replicas=1)
    report = observation(gvc, [replica("web-0", "u0", True)], {"u0": 1}, 1)
    assert post(api, report)["stored"] == [f"{gvc}/web"]
    before = api.get(f"/org/acme/gvc/{gvc}/workload/web").content
    assert post(api, report) == {"stored": [], "unchanged": [f"{gvc}/web"], "missing": []}
    # The status carries its computation time: an identical item means no rewrite happened.
    assert api.get(f"/org/acme/gvc/{gvc}/workload/web").content == before


def test_the_report_goes_with_its_workload(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc, replicas=1)
    report = observation(gvc, [replica("web-0", "d0", True)], {"d0": 1}, 1)
    post(api, report)
    assert status(api, gvc)["ready"] is True
    assert api.delete(f"/org/acme/gvc/{gvc}/workload/web").status_code == 202
    assert post(api, report)["missing"] == [f"{gvc}/web"]
    made = make_workload(api, gvc, replicas=1)  # the same name again: nothing is inherited
    assert made["status"]["ready"] is False
    assert made["status"]["healthCheck"]["message"] == "waiting for the runtime controller"


def test_a_report_for_a_missing_org_is_404(api: httpx.Client) -> None:
    assert api.post("/org/nosuchorg/-runtime/observations", json={"workloads": []}).status_code == 404


def test_commands_stay_pending_until_the_controller_moves_them(api: httpx.Client, gvc: str) -> None:
    make_workload(api, gvc, replicas=1)
    base = f"/org/acme/gvc/{gvc}/workload/web/-command"
    made = ok(api.post(base, json={"type": "stopReplica", "spec": {"location": "aws-us-east-1"}}), 201)
    assert made["lifecycleStage"] == "pending"
    listed = ok(api.get("/org/acme/-runtime/commands"))["items"]
    assert {"id": made["id"], "gvc": gvc, "workload": "web", "lifecycleStage": "pending"}.items() <= next(
        c for c in listed if c["id"] == made["id"]
    ).items()
    key = service_account_with_key(api, "acme", f"{gvc}-cmd")
    assert api.get("/org/acme/-runtime/commands", headers={"Authorization": f"Bearer {key}"}).status_code == 403

    def move(stage: str, **status: Any) -> Any:
        update = {"gvc": gvc, "workload": "web", "id": made["id"], "lifecycleStage": stage, "status": status}
        return ok(api.post("/org/acme/-runtime/commands", json={"commands": [update]}))

    label = f"{gvc}/web/{made['id']}"
    assert move("running")["stored"] == [label]
    assert ok(api.get(f"{base}/{made['id']}"))["lifecycleStage"] == "running"
    assert move("completed", podId="web-0")["stored"] == [label]
    assert move("running")["unchanged"] == [label]  # never backwards
    shown = ok(api.get(f"{base}/{made['id']}"))
    assert shown["lifecycleStage"] == "completed" and shown["status"]["podId"] == "web-0"
    assert made["id"] not in {c["id"] for c in ok(api.get("/org/acme/-runtime/commands"))["items"]}
    refused = api.post("/org/acme/-runtime/commands", json={"commands": [{"gvc": gvc, "lifecycleStage": "done"}]})
    assert refused.status_code == 400
    paths = {e["path"] for e in refused.json()["details"]["errors"]}
    assert {"commands[0].workload", "commands[0].id", "commands[0].lifecycleStage"} <= paths, paths
