"""Shared set-up of the controller tests that run real podman: the engine (a stable hash key),
and ``World``, a test's workload documents planned under its own scope label."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any

import pytest

from plinth.runtime.containers import CliEngine, ContainerInfo, ReplicaSpec
from plinth.runtime.controller import ReconcileReport, plan_workload, reconcile
from tests.aio import RunAsync
from tests.support.containers import TEST_RUN, ContainerKit

KEY = os.urandom(32)
LOCATION = "aws-us-west-2"
SCOPE = "plinth.test-scope"
READY_WAIT_S = 30


def _engine() -> CliEngine:
    binary = shutil.which("podman")
    assert binary is not None
    return CliEngine("podman", binary, hash_key=KEY)


@pytest.fixture(scope="module")
def engine(test_containers: ContainerKit) -> CliEngine:
    return _engine()


class World:
    """Workload documents of one test and the desired replicas they plan to."""

    def __init__(self, kit: ContainerKit, scope: str) -> None:
        self.kit = kit
        self.org = f"t{kit.run_id}"
        self.scope = {TEST_RUN: kit.run_id, SCOPE: scope}

    def workload(
        self, name: str, type_: str = "standard", replicas: int = 1, image: str | None = None
    ) -> dict[str, Any]:
        return {
            "kind": "workload",
            "name": name,
            "version": 1,
            "tags": {},
            "links": [{"rel": "self", "href": f"/org/{self.org}/gvc/main/workload/{name}"}],
            "spec": {
                "type": type_,
                "containers": [{"name": "main", "image": image or self.kit.image, "ports": [{"number": 8080}]}],
                "defaultOptions": {"autoscaling": {"minScale": replicas, "maxScale": max(replicas, 1)}},
            },
        }

    def desired(self, *workloads: Mapping[str, Any]) -> list[ReplicaSpec]:
        gvc: dict[str, Any] = {"kind": "gvc", "name": "main", "alias": "x"}
        gvc["links"] = [{"rel": "self", "href": f"/org/{self.org}/gvc/main"}]
        out: list[ReplicaSpec] = []
        for doc in workloads:
            out += plan_workload(doc, gvc, [LOCATION], resolve=lambda ref: ref, labels=self.scope)
        return out

    def sync(self, run_async: RunAsync, driver: Any, *workloads: Mapping[str, Any]) -> ReconcileReport:
        report = run_async(reconcile(self.desired(*workloads), driver, scope=self.scope))
        assert report.errors == {}
        return report

    def running(self, run_async: RunAsync, driver: CliEngine) -> dict[str, ContainerInfo]:
        """Replica containers in scope by engine name."""
        return {info.name: info for info in run_async(driver.list(self.scope))}


@pytest.fixture
def world(test_containers: ContainerKit, request: pytest.FixtureRequest) -> World:
    return World(test_containers, request.node.name[5:40].replace("_", "-").replace("[", "-").rstrip("]"))
