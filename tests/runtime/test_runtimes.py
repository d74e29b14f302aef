"""The runtimes as the engine calls them: what each reports for a placement, and command outcomes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plinth.runtime import RUNTIMES, make_runtime
from plinth.runtime.base import Placement
from plinth.runtime.deployments import location_options, replicas_at
from plinth.runtime.none import MESSAGE


def workload(**spec: Any) -> dict[str, Any]:
    base = {
        "type": "standard",
        "containers": [{"name": "app", "image": "nginx:1.27", "cpu": "50m", "memory": "128Mi"}],
        "defaultOptions": {"autoscaling": {"minScale": 2, "maxScale": 5}, "suspend": False},
    }
    return {"name": "web", "version": 3, "lastModified": "2026-01-01T00:00:00.000Z", "spec": {**base, **spec}}


GVC = {"name": "main", "alias": "abc", "version": 7}


def placement(item: dict[str, Any], locations: tuple[str, ...] = ("aws-us-east-1", "gcp-us-east1")) -> Placement:
    return Placement(item, GVC, "/org/acme/gvc/main/workload/web", locations, "example.net")


def test_local_options_override_only_what_they_name() -> None:
    item = workload(
        localOptions=[{"location": "/org/acme/location/gcp-us-east1", "autoscaling": {"minScale": 4}, "suspend": True}]
    )
    assert location_options(item, "gcp-us-east1") == {"autoscaling": {"minScale": 4, "maxScale": 5}, "suspend": True}
    assert location_options(item, "aws-us-east-1")["autoscaling"]["minScale"] == 2


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, 2),
        ({"defaultOptions": {"autoscaling": {"minScale": 0, "maxScale": 3}}}, 0),
        ({"defaultOptions": {"autoscaling": {"minScale": 1, "maxScale": 0}}}, 0),
        ({"defaultOptions": {"autoscaling": {"minScale": 2, "maxScale": 5}, "suspend": True}}, 0),
        ({"type": "cron"}, 0),
    ],
)
def test_replicas_follow_the_autoscaling_lower_bound(spec: dict[str, Any], expected: int) -> None:
    assert replicas_at(workload(**spec), "aws-us-east-1") == expected


def test_simulated_deployments_are_ready_at_the_latest_version() -> None:
    runtime = make_runtime("simulated")
    deployments = asyncio.run(runtime.deployments(placement(workload()), []))
    assert [d["name"] for d in deployments] == ["aws-us-east-1", "gcp-us-east1"]
    first = deployments[0]["status"]
    assert (first["ready"], first["lastProcessedVersion"], first["expectedDeploymentVersion"]) == (True, 3, 3)
    assert first["endpoint"] == "https://web-abc.aws-us-east-1.example.net"
    assert first["versions"][0]["containers"]["app"]["resources"]["replicas"] == 2
    assert "jobExecutions" not in first and "remote" not in first
    summary = runtime.summary(placement(workload()))
    assert (summary.ready, summary.replicas) == (True, 4)
    assert runtime.summary(placement(workload(), ())).ready is False  # placed nowhere, runs nowhere


def test_a_cron_run_completes_and_shows_in_its_location_only() -> None:
    runtime = make_runtime("simulated")
    cron = workload(type="cron", job={"schedule": "0 3 * * *"})
    command = {
        "id": "c1",
        "type": "runCronWorkload",
        "spec": {"location": "gcp-us-east1"},
        "created": "2026-01-02T00:00:00.000Z",
    }
    outcome = asyncio.run(runtime.submit(placement(cron), command))
    assert outcome.lifecycle_stage == "completed" and outcome.status["replica"] == "command-c1"
    stored = {**command, "status": outcome.status}
    by_name = {d["name"]: d for d in asyncio.run(runtime.deployments(placement(cron), [stored]))}
    assert by_name["aws-us-east-1"]["status"]["jobExecutions"] == []
    [execution] = by_name["gcp-us-east1"]["status"]["jobExecutions"]
    assert (execution["name"], execution["status"], execution["workloadVersion"]) == ("command-c1", "successful", 3)


def test_no_runtime_reports_nothing_ready_and_says_why() -> None:
    runtime = make_runtime("none")
    deployments = asyncio.run(runtime.deployments(placement(workload()), []))
    assert [d["status"]["ready"] for d in deployments] == [False, False]
    assert {d["status"]["message"] for d in deployments} == {MESSAGE}
    assert runtime.summary(placement(workload())).ready is False
    command = {"id": "c1", "type": "stopReplica", "spec": {"location": "aws-us-east-1"}, "created": "x"}
    assert asyncio.run(runtime.submit(placement(workload()), command)).lifecycle_stage == "pending"


def test_runtimes_are_chosen_by_name() -> None:
    assert set(RUNTIMES) == {"simulated", "none", "containers"}
    with pytest.raises(ValueError, match="unknown runtime 'k8s'"):
        make_runtime("k8s")
