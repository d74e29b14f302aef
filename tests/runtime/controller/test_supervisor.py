"""Probes and restart back-off: the pure parts (probe parsing, thresholds, the back-off
schedule), then real podman: a crashing replica restarted under the back-off, readiness by
http, tcp and exec probes through 127.0.0.1 ports and the engine, a failing liveness probe
restarting its replica, and what the supervisor observed. The clock is the test's own."""

from __future__ import annotations

import time
from typing import Any

import pytest

from plinth.runtime.containers import CliEngine, ContainerInfo
from plinth.runtime.controller import CONTAINER, reconcile
from plinth.runtime.controller.probes import Probe, ProbeTracker, container_probes, parse_probe
from plinth.runtime.controller.reconcile import ReconcileReport
from plinth.runtime.controller.supervisor import Supervisor
from tests.aio import RunAsync
from tests.runtime.controller.conftest import READY_WAIT_S, World

SLOT = ("o", "g", "w", "loc", "w-0", "main")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_probes_parse_with_the_apis_defaults() -> None:
    container = {
        "name": "main",
        "ports": [{"number": 8080}],
        "readinessProbe": {"httpGet": {}},
        "livenessProbe": {"tcpSocket": {}},
    }
    readiness, liveness = container_probes({"spec": {"containers": [container]}}, "main")
    assert readiness == Probe("http", port=8080, path="/", scheme="http", initial_delay_s=10)
    assert liveness == Probe("tcp", port=8080, initial_delay_s=60)
    assert parse_probe(
        {"readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 2}}, "readinessProbe"
    ) == Probe("exec", command=("true",), initial_delay_s=10, period_s=2)
    assert container_probes({"spec": {"containers": [container]}}, "other") == (None, None)


def test_a_tracker_waits_its_delay_and_counts_consecutive_results() -> None:
    tracker = ProbeTracker(
        Probe("tcp", initial_delay_s=5, period_s=2, success_threshold=2, failure_threshold=2), started=0
    )
    assert not tracker.due(4) and tracker.due(5)
    tracker.record(None, 5)
    assert tracker.passing is None and not tracker.due(6) and tracker.due(7)
    tracker.record(None, 7)
    assert tracker.passing is True
    tracker.record("down", 9)
    assert tracker.passing is True  # one failure is under the threshold
    tracker.record("down", 11)
    assert (tracker.passing, tracker.message) == (False, "down")


def test_the_back_off_doubles_to_its_cap_and_a_new_template_starts_afresh() -> None:
    clock = Clock()
    supervisor = Supervisor(base_s=10, cap_s=35, clock=clock)
    waits = []
    for _ in range(4):
        supervisor.crashed(SLOT, "d1", "exit 3")
        assert supervisor.may_start(SLOT, "d1") is not None
        waits.append(supervisor.next_restart() - clock.now)  # type: ignore[operator]
        clock.now += waits[-1]
        assert supervisor.may_start(SLOT, "d1") is None
    assert waits == [10, 20, 35, 35]
    supervisor.crashed(SLOT, "d1", "exit 3")
    assert supervisor.may_start(SLOT, "d2") is None  # another template: no wait, no count


def _workload(world: World, name: str, container: dict[str, Any]) -> dict[str, Any]:
    doc = world.workload(name)
    doc["spec"]["containers"][0].update(container)
    return doc


def _pass(
    run_async: RunAsync, world: World, engine: CliEngine, sup: Supervisor, *docs: dict[str, Any]
) -> ReconcileReport:
    report: ReconcileReport = run_async(reconcile(world.desired(*docs), engine, scope=world.scope, gate=sup))
    return report


def _probe(
    run_async: RunAsync, engine: CliEngine, sup: Supervisor, world: World, *docs: dict[str, Any]
) -> list[ContainerInfo]:
    by_name = {doc["name"]: doc for doc in docs}

    def probes_for(info: ContainerInfo) -> Any:
        return container_probes(by_name[info.labels["plinth.workload"]], info.labels[CONTAINER])

    listed_at = sup.clock()
    infos: list[ContainerInfo] = run_async(engine.list(world.scope))
    run_async(sup.probe(engine, infos, probes_for, listed_at))
    return infos


def _until_exited(run_async: RunAsync, engine: CliEngine, world: World) -> None:
    deadline = time.monotonic() + READY_WAIT_S
    while any(info.running for info in run_async(engine.list(world.scope))):
        assert time.monotonic() < deadline, "the container kept running"
        time.sleep(0.2)


def test_a_crashing_replica_is_restarted_under_the_back_off(
    run_async: RunAsync, engine: CliEngine, world: World
) -> None:
    clock = Clock()
    sup = Supervisor(base_s=10, cap_s=300, clock=clock)
    doc = _workload(world, "crash", {"command": "sh", "args": ["-c", "sleep 2; exit 3"]})
    try:
        first = _pass(run_async, world, engine, sup, doc)
        assert len(first.created) == 1 and first.errors == {}
        _until_exited(run_async, engine, world)
        held = _pass(run_async, world, engine, sup, doc)
        (why,) = held.waiting.values()
        assert held.created == [] and why.startswith("back-off 10 s")
        assert "exited with code 3" in why
        _probe(run_async, engine, sup, world, doc)
        (replica,) = sup.observed()[f"{world.org}/main/crash"].replicas
        assert (replica.ready, replica.restarts, replica.name) == (False, 1, "")
        assert "back-off" in replica.message
        clock.now += 10
        again = _pass(run_async, world, engine, sup, doc)
        assert len(again.created) == 1 and again.waiting == {}
        _probe(run_async, engine, sup, world, doc)
        (replica,) = sup.observed()[f"{world.org}/main/crash"].replicas
        assert (replica.ready, replica.restarts, replica.name) == (True, 1, again.created[0])  # no readiness probe
    finally:
        run_async(reconcile([], engine, scope=world.scope))


PROBE = {"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1}


@pytest.mark.parametrize(
    ("probe", "ready", "message"),
    [
        ({"httpGet": {"path": "/index.html"}}, True, ""),
        ({"httpGet": {"path": "/missing"}}, False, "http probe /missing on port 8080 answered 404"),
        ({"tcpSocket": {}}, True, ""),
        ({"tcpSocket": {"port": 9999}}, False, "probe port 9999 is not published"),
        ({"exec": {"command": ["test", "-f", "/www/index.html"]}}, True, ""),
        ({"exec": {"command": ["test", "-f", "/nothing"]}}, False, "exec probe exited with 1"),
    ],
)
def test_readiness_probes_through_published_ports_and_exec(
    run_async: RunAsync, engine: CliEngine, world: World, probe: dict[str, Any], ready: bool, message: str
) -> None:
    clock = Clock()
    sup = Supervisor(clock=clock)
    doc = _workload(world, "probed", {"readinessProbe": {**probe, **PROBE}})
    try:
        _pass(run_async, world, engine, sup, doc)
        deadline = time.monotonic() + READY_WAIT_S
        while True:  # the server inside may take a moment to listen
            infos = _probe(run_async, engine, sup, world, doc)
            (replica,) = sup.observed()[f"{world.org}/main/probed"].replicas
            if (replica.ready, replica.message) == (ready, message) or time.monotonic() > deadline:
                break
            clock.now += 1
            time.sleep(0.2)
        assert (replica.ready, replica.message) == (ready, message)
        (info,) = infos
        assert replica.template == info.spec_hash[:12]  # type: ignore[index]
        expected = {("main", "probed", 8080): [info.ports[8080]]} if ready else {}
        assert sup.ready_ports() == expected
    finally:
        run_async(reconcile([], engine, scope=world.scope))


def test_a_failing_liveness_probe_restarts_the_replica(run_async: RunAsync, engine: CliEngine, world: World) -> None:
    clock = Clock()
    sup = Supervisor(base_s=5, clock=clock)
    # A generous timeout: the failure under test is the exit code, not a podman exec that a
    # loaded machine keeps past the default 1 s.
    probe = {"exec": {"command": ["false"]}, **PROBE, "timeoutSeconds": 30}
    doc = _workload(world, "alive", {"livenessProbe": probe})
    try:
        (first,) = _pass(run_async, world, engine, sup, doc).created
        _probe(run_async, engine, sup, world, doc)  # fails once: the threshold is 1, so it is stopped
        assert not any(info.running for info in run_async(engine.list(world.scope)))
        held = _pass(run_async, world, engine, sup, doc)
        assert "liveness probe failed: exec probe exited with 1" in held.waiting[first]
        clock.now += 5
        (second,) = _pass(run_async, world, engine, sup, doc).created
        assert second == first  # the same template, so the same name, started again
        (replica,) = sup.observed()[f"{world.org}/main/alive"].replicas
        # Last seen: the stopped container, so not ready, and the restart counted.
        assert (replica.restarts, replica.ready, replica.message) == (
            1,
            False,
            "liveness probe failed: exec probe exited with 1",
        )
    finally:
        run_async(reconcile([], engine, scope=world.scope))


def test_a_surge_retires_the_old_replica_only_once_the_new_one_is_ready(
    run_async: RunAsync, engine: CliEngine, world: World
) -> None:
    sup = Supervisor()  # the real clock: the readiness probe is checked every second
    docs: dict[str, dict[str, Any]] = {}
    sup.probes_for = lambda info: container_probes(docs["surge"], info.labels[CONTAINER])

    def roll(path: str, generation: str) -> ReconcileReport:
        probe = {"httpGet": {"path": path}, **PROBE}
        docs["surge"] = _workload(
            world, "surge", {"readinessProbe": probe, "env": [{"name": "G", "value": generation}]}
        )
        desired = world.desired(docs["surge"])
        report: ReconcileReport = run_async(
            reconcile(desired, engine, scope=world.scope, gate=sup, running_timeout_s=5)
        )
        return report

    try:
        roll("/index.html", "1")
        (old,) = run_async(engine.list(world.scope))
        ready = roll("/index.html", "2")  # the new one passes its probe: the old one goes
        assert ready.errors == {} and old.name in ready.removed
        (kept,) = run_async(engine.list(world.scope))
        never = roll("/missing", "3")  # the new one never gets ready: it goes, the old one stays
        (why,) = never.errors.values()
        assert "was not ready within 5 s: http probe /missing on port 8080 answered 404" in why
        assert [i.id for i in run_async(engine.list(world.scope))] == [kept.id]
    finally:
        run_async(reconcile([], engine, scope=world.scope))


def test_a_pass_list_seen_makes_a_new_replica_without_a_readiness_probe_ready_before_any_probe(
    run_async: RunAsync, engine: CliEngine, world: World
) -> None:
    """``Supervisor.seen`` (the pass's own list, docs/runtime.md "The gateway"): a container
    the pass started is observed at once; ready when it needs no probe, not when a readiness
    probe has yet to pass; no verdict is given (the prober's next round reports the change)."""
    sup = Supervisor(clock=Clock())
    plain = _workload(world, "plain", {})
    probed = _workload(world, "probed", {"readinessProbe": {"tcpSocket": {}, **PROBE}})
    by_name = {doc["name"]: doc for doc in (plain, probed)}
    sup.probes_for = lambda info: container_probes(by_name[info.labels["plinth.workload"]], info.labels[CONTAINER])
    try:
        report = _pass(run_async, world, engine, sup, plain, probed)
        assert len(report.created) == 2 and report.errors == {}
        assert sup.observed() == {}  # no list seen, no probe yet: nothing observed
        sup.seen(run_async(engine.list(world.scope)))
        observed = sup.observed()
        (ready,) = observed[f"{world.org}/main/plain"].replicas
        (waiting,) = observed[f"{world.org}/main/probed"].replicas
        assert (ready.ready, ready.message) == (True, "")
        assert (waiting.ready, waiting.message) == (False, "readiness probe has not passed yet")
        assert list(sup.ready_ports()) == [("main", "plain", 8080)]
        assert sup.changed == set()
    finally:
        run_async(reconcile([], engine, scope=world.scope))


def test_a_probe_of_a_list_older_than_a_pass_keeps_the_passes_new_replica_ready(
    run_async: RunAsync, engine: CliEngine, world: World
) -> None:
    """The prober may probe its last list while a pass starts containers (it does not list
    during a young pass): a container the pass started after that list is not in it, yet not
    gone, so it stays ready for the gateway's next load; a list asked for after it was
    watched, which does not show it, drops it."""
    clock = Clock()
    sup = Supervisor(clock=clock)
    plain = _workload(world, "plain", {})
    sup.probes_for = lambda info: container_probes(plain, info.labels[CONTAINER])
    try:
        before_the_pass = run_async(engine.list(world.scope))  # the prober's last list: empty
        listed_at = clock.now
        clock.now += 1
        report = _pass(run_async, world, engine, sup, plain)
        assert len(report.created) == 1
        fresh = run_async(engine.list(world.scope))
        sup.seen(fresh)  # the pass's own list, after it started the container
        (info,) = [i for i in fresh if i.labels["plinth.workload"] == "plain"]
        assert sup.is_ready(info)
        clock.now += 1
        run_async(sup.probe(engine, before_the_pass, sup.probes_for, listed_at))
        assert sup.is_ready(info), "a list from before the pass dropped the pass's new replica"
        run_async(sup.probe(engine, before_the_pass, sup.probes_for, clock.now))
        assert not sup.is_ready(info)  # a list newer than its watch that lacks it: gone
    finally:
        run_async(reconcile([], engine, scope=world.scope))
