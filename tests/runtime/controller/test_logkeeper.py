"""The controller's log keeper over a real log store (SQLite): what is gone has its lines
dropped, what exists keeps them, and a going container's last writes are not stored again.
The end-to-end case (a workload deleted through the API, through ``plinth serve``) is in
tests/compat/test_logs_containers.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plinth.runtime.containers import CliEngine
from plinth.runtime.controller.logkeeper import LogKeeper
from plinth.runtime.logs import LogService
from plinth.runtime.logs.collector import Source
from plinth.runtime.logs.records import Record
from plinth.runtime.logs.store import Position
from tests.aio import RunAsync


def labels(org: str, gvc: str, workload: str) -> dict[str, str]:
    return {"org": org, "gvc": gvc, "workload": workload, "container": "main", "location": "aws-us-east-2"} | {
        "provider": "aws",
        "replica": f"{workload}-0",
    }


@pytest.fixture
def service(tmp_path: Path) -> Iterator[LogService]:
    # The engine is never called: collection is not started, lines are stored directly.
    logs = LogService(CliEngine("podman", "podman"), tmp_path / "logs")
    now = time.time_ns()
    for n, (org, gvc, workload) in enumerate(
        [("a", "g", "kept"), ("a", "g", "gone"), ("a", "h", "gone"), ("b", "g", "kept")]
    ):
        record = Record(now + n, "stdout", f"{org}/{gvc}/{workload}")
        logs.store.append(f"c{n}", Position(f"/c{n}", 1, 1), labels(org, gvc, workload), [record])
    yield logs
    logs.store.close()


def test_a_pass_drops_the_workloads_the_org_no_longer_has(service: LogService, run_async: RunAsync) -> None:
    keeper = LogKeeper(service)
    errors = run_async(keeper.collect("a", {("g", "kept"), ("h", "other")}))
    assert errors == {}
    assert service.workloads() == {("a", "g", "kept"), ("b", "g", "kept")}
    assert run_async(keeper.collect("a", {("g", "kept")})) == {}  # nothing more to drop
    assert service.workloads() == {("a", "g", "kept"), ("b", "g", "kept")}


def test_orgs_that_are_gone_lose_every_line(service: LogService, run_async: RunAsync) -> None:
    keeper = LogKeeper(service)
    assert run_async(keeper.orgs()) == {"a", "b"}
    run_async(keeper.drop_orgs({"a"}))
    assert service.workloads() == {("b", "g", "kept")}
    status, answer = service.query_range("a", {"query": '{workload=~".+"}', "start": "0"})
    assert status == 200 and answer["data"]["result"] == []


def test_a_dropped_workloads_going_container_stores_nothing_more(service: LogService, tmp_path: Path) -> None:
    log_file = tmp_path / "ctr.log"
    log_file.write_text("2026-01-01T00:00:00.000000000Z stdout F late line\n")
    source = Source("c9", str(log_file), labels("a", "g", "gone"))
    other = Source("c8", str(log_file), labels("a", "g", "kept"))
    service.collector.sources.update({"c9": source, "c8": other})
    service.drop_workload("a", "g", "gone")
    assert source.dropped and not other.dropped
    assert service.collector._read_files([source], []) == 0
    assert ("a", "g", "gone") not in service.workloads()
    assert service.collector._read_files([other], []) == 1  # the kept workload's container still is read
