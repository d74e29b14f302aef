"""The reconcile loop against real podman: creation, idempotence, adoption, scaling, stateful
names, surge rollouts, orphans, and containers it does not manage.

Each test works under its own scope label (and the session's test-run label), so orphan
collection only ever sees the containers of that test; the org is named after the test run,
so engine names never meet another session's. Replicas are reached only through ports
published on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest

from plinth.runtime.containers import CliEngine, ContainerInfo, ExecResult, ReplicaSpec
from plinth.runtime.containers.protocol import MANAGED, WORKLOAD
from plinth.runtime.controller import REPLICA, engine_name, reconcile
from plinth.runtime.controller.pulls import PullBackoff
from tests.aio import RunAsync
from tests.runtime.controller.conftest import LOCATION, READY_WAIT_S, SCOPE, World, _engine
from tests.support.containers import INDEX, ContainerKit, get_when_up, podman


def _ids(infos: Mapping[str, ContainerInfo]) -> dict[str, str]:
    return {name: info.id for name, info in infos.items()}


@pytest.fixture(scope="module")
def web(test_containers: ContainerKit, engine: CliEngine) -> Iterator[tuple[World, dict[str, Any], dict[str, str]]]:
    """Two standard replicas made from nothing by one pass, shared by the tests that only look."""
    from tests.aio import event_loop_runner

    world = World(test_containers, "shared-web")
    doc = world.workload("web", replicas=2)
    with event_loop_runner() as run_async:
        report = world.sync(run_async, engine, doc)
        made = world.running(run_async, engine)
        assert sorted(report.created) == sorted(made) and report.removed == [] and report.adopted == []
        yield world, doc, _ids(made)
        run_async(reconcile([], engine, scope=world.scope))


def test_a_pass_creates_the_replicas_running_labelled_and_reachable(
    web: tuple[World, dict[str, Any], dict[str, str]], engine: CliEngine, run_async: RunAsync
) -> None:
    world, _, ids = web
    infos = world.running(run_async, engine)
    assert len(infos) == 2 and all(info.running for info in infos.values())
    assert sorted(info.labels[REPLICA] for info in infos.values()) == ["web-0", "web-1"]
    for info in infos.values():
        assert info.labels[MANAGED] == "true" and info.labels[WORKLOAD] == "web"
        assert info.labels["plinth.org"] == world.org and info.labels["plinth.location"] == LOCATION
        assert set(info.ports) == {8080}
        assert get_when_up(info.ports[8080], READY_WAIT_S).content == INDEX
    # The engine name is the plan's name plus the spec's digest.
    desired = world.desired(world.workload("web", replicas=2))
    assert sorted(engine_name(spec, engine) for spec in desired) == sorted(ids)


def test_a_second_pass_with_nothing_changed_does_nothing(
    web: tuple[World, dict[str, Any], dict[str, str]], engine: CliEngine, run_async: RunAsync
) -> None:
    world, doc, ids = web
    report = world.sync(run_async, engine, doc)
    assert report.created == [] and report.removed == [] and not report.changed
    assert sorted(report.adopted) == sorted(ids)
    assert _ids(world.running(run_async, engine)) == ids


def test_another_reconciler_instance_adopts_without_restarting(
    web: tuple[World, dict[str, Any], dict[str, str]], run_async: RunAsync
) -> None:
    world, doc, ids = web
    fresh = _engine()  # a new driver, as after a restart of the controller: only the key is kept
    report = world.sync(run_async, fresh, doc)
    assert not report.changed and sorted(report.adopted) == sorted(ids)
    after = world.running(run_async, fresh)
    assert _ids(after) == ids
    assert all(info.running for info in after.values())


def test_scaling_up_adds_replicas_and_down_removes_the_highest(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    world.sync(run_async, engine, world.workload("api", replicas=1))
    first = _ids(world.running(run_async, engine))
    world.sync(run_async, engine, world.workload("api", replicas=3))
    grown = world.running(run_async, engine)
    assert sorted(i.labels[REPLICA] for i in grown.values()) == ["api-0", "api-1", "api-2"]
    assert {n: i for n, i in _ids(grown).items() if n in first} == first  # the first one kept
    report = world.sync(run_async, engine, world.workload("api", replicas=1))
    assert len(report.removed) == 2 and report.created == []
    assert _ids(world.running(run_async, engine)) == first
    world.sync(run_async, engine, world.workload("api", replicas=0))
    assert world.running(run_async, engine) == {}


def test_stateful_replicas_keep_their_names_and_are_replaced_in_place(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    doc = world.workload("db", "stateful", replicas=2)
    created = world.sync(run_async, engine, doc).created
    infos = world.running(run_async, engine)
    names = [f"plinth_{world.org}_main_{LOCATION}_db-{i}_main" for i in range(2)]
    assert sorted(infos) == names and created == names  # started in order
    assert podman("container", "inspect", "--format", "{{.Config.Hostname}}", names[1]).stdout.strip() == "db-1"
    before = _ids(infos)
    doc["spec"]["containers"][0]["env"] = [{"name": "VERSION", "value": "2"}]
    report = world.sync(run_async, engine, doc)
    after = world.running(run_async, engine)
    assert sorted(after) == names and sorted(report.created) == names
    assert all(after[n].id != before[n] and after[n].running for n in names)


class Watching:
    """The real driver, with what ran in scope noted at each ``stop``: a spy on the sequence of
    a rollout, every call still made by podman."""

    def __init__(self, inner: CliEngine, scope: Mapping[str, str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.scope = scope
        #: (the container being stopped, the running containers in scope at that moment)
        self.stops: list[tuple[str, dict[str, ContainerInfo]]] = []

    def digest(self, spec: ReplicaSpec) -> str:
        return self.inner.digest(spec)

    async def image_present(self, image: str) -> bool:
        return await self.inner.image_present(image)

    async def pull(self, image: str) -> None:
        await self.inner.pull(image)

    async def run(self, spec: ReplicaSpec) -> ContainerInfo:
        return await self.inner.run(spec)

    async def start(self, spec: ReplicaSpec) -> None:
        await self.inner.start(spec)

    async def list(self, labels: Mapping[str, str] | None = None) -> list[ContainerInfo]:
        return await self.inner.list(labels)

    async def inspect(self, name: str) -> ContainerInfo | None:
        return await self.inner.inspect(name)

    async def stop(self, name: str, timeout_s: float = 10) -> None:
        live = {i.name: i for i in await self.inner.list(self.scope) if i.running}
        self.stops.append((name, live))
        await self.inner.stop(name, timeout_s)

    async def remove(self, name: str) -> None:
        await self.inner.remove(name)

    async def exec(self, name: str, argv: Sequence[str], timeout_s: float = 30) -> ExecResult:
        return await self.inner.exec(name, argv, timeout_s)

    def logs(self, name: str, since: datetime | None = None, follow: bool = False) -> Any:
        return self.inner.logs(name, since, follow)

    async def ensure_network(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        await self.inner.ensure_network(name, labels)

    async def remove_network(self, name: str) -> None:
        await self.inner.remove_network(name)

    async def ensure_volume(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        await self.inner.ensure_volume(name, labels)

    async def list_volumes(self, labels: Mapping[str, str]) -> Sequence[str]:
        return await self.inner.list_volumes(labels)

    async def remove_volume(self, name: str) -> None:
        await self.inner.remove_volume(name)


@pytest.fixture
def second_image(test_containers: ContainerKit) -> Iterator[str]:
    """The test image under a second name (a new image as far as a workload can tell)."""
    tag = f"localhost/plinth-test-busybox-rollout:{test_containers.run_id}"
    podman("tag", test_containers.image, tag)
    yield tag
    podman("untag", tag, tag, check=False)  # this name only: the image keeps its own


def test_an_image_change_rolls_one_replica_at_a_time_new_running_before_old_goes(
    world: World, engine: CliEngine, run_async: RunAsync, second_image: str
) -> None:
    world.sync(run_async, engine, world.workload("roll", replicas=2))
    old = world.running(run_async, engine)
    watching = Watching(engine, world.scope)
    report = world.sync(run_async, watching, world.workload("roll", replicas=2, image=second_image))
    new = world.running(run_async, watching)
    assert sorted(report.removed) == sorted(old) and sorted(report.created) == sorted(new)
    assert set(new).isdisjoint(old) and all(i.running for i in new.values())
    assert all(second_image in i.image for i in new.values())
    assert [name for name, _ in watching.stops] == report.removed
    for stopped, live in watching.stops:
        replica = old[stopped].labels[REPLICA]
        successors = [i for i in live.values() if i.labels[REPLICA] == replica and i.name in new]
        assert successors, f"{stopped} was stopped before its successor ran"
        # One at a time: never more than one surge replica beside the two wanted.
        assert len(live) <= 3


def test_orphans_are_collected_and_the_rest_is_left_running(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    keep, gone = world.workload("keep"), world.workload("gone", replicas=2)
    world.sync(run_async, engine, keep, gone)
    kept = {n: i for n, i in _ids(world.running(run_async, engine)).items() if "_keep-" in n}
    report = world.sync(run_async, engine, keep)  # "gone" was deleted (or its GVC, or its org)
    assert len(report.removed) == 2 and all("_gone-" in n for n in report.removed)
    assert _ids(world.running(run_async, engine)) == kept
    world.sync(run_async, engine)  # nothing desired at all
    assert world.running(run_async, engine) == {}


def test_a_container_plinth_does_not_manage_is_never_touched(
    world: World, engine: CliEngine, run_async: RunAsync, test_containers: ContainerKit
) -> None:
    # It carries every label a replica of this scope would, except plinth.managed=true.
    labels = {**world.scope, "plinth.org": world.org, "plinth.gvc": "main", "plinth.workload": "web"}
    labels |= {"plinth.location": LOCATION, REPLICA: "web-0", "plinth.container": "main", MANAGED: "false"}
    name = f"t-{test_containers.run_id}-unmanaged"
    args = [arg for k, v in labels.items() for arg in ("--label", f"{k}={v}")]
    podman("run", "--detach", "--name", name, *args, test_containers.image)
    try:
        before = podman("container", "inspect", "--format", "{{.Id}} {{.State.Status}}", name).stdout
        world.sync(run_async, engine, world.workload("web"))
        world.sync(run_async, engine)
        after = podman("container", "inspect", "--format", "{{.Id}} {{.State.Status}}", name).stdout
        assert after == before and after.split()[1] == "running"
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)


def test_a_missing_image_is_reported_for_its_workload_and_the_others_still_run(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    absent = "localhost/plinth-test-absent:never-built"
    desired = world.desired(world.workload("fine"), world.workload("broken", image=absent))
    report = run_async(reconcile(desired, engine, scope=world.scope))
    assert list(report.errors) == [f"{world.org}/main/broken"] and absent in report.errors[f"{world.org}/main/broken"]
    infos = world.running(run_async, engine)
    assert [i.labels[WORKLOAD] for i in infos.values()] == ["fine"]


class CountingPulls(Watching):
    """The real driver, counting the pulls it is asked for."""

    def __init__(self, inner: CliEngine, scope: Mapping[str, str]) -> None:
        super().__init__(inner, scope)
        self.pulls = 0

    async def pull(self, image: str) -> None:
        self.pulls += 1
        await self.inner.pull(image)


def test_a_failed_pull_is_retried_with_back_off_and_says_so(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    absent = "localhost/plinth-test-absent:never-built"
    now = [0.0]
    pulls = PullBackoff(base_s=10, cap_s=300, clock=lambda: now[0])
    driver = CountingPulls(engine, world.scope)
    desired = world.desired(world.workload("broken", image=absent))
    key = f"{world.org}/main/broken"

    def error() -> str:
        return run_async(reconcile(desired, driver, scope=world.scope, pulls=pulls)).errors[key]

    first = error()
    assert driver.pulls == 1 and absent in first and "(1 failed pull;" in first
    now[0] = 9.0  # within the back-off: the pass fails at once with the same message, no pull
    assert error() == first and driver.pulls == 1
    now[0] = 10.5
    assert "(2 failed pulls;" in error() and driver.pulls == 2
    now[0] = 25.0  # the second wait is 20 s
    assert error().endswith("(2 failed pulls; next try with back-off)") and driver.pulls == 2


def test_a_desired_spec_outside_the_scope_is_refused(world: World, engine: CliEngine, run_async: RunAsync) -> None:
    spec = world.desired(world.workload("web"))[0]
    with pytest.raises(ValueError, match="scope"):
        run_async(reconcile([spec], engine, scope={**world.scope, SCOPE: "elsewhere"}))
    assert world.running(run_async, engine) == {}


def test_two_desired_specs_for_one_slot_are_refused(world: World, engine: CliEngine, run_async: RunAsync) -> None:
    spec = world.desired(world.workload("web"))[0]
    with pytest.raises(ValueError, match="two desired specs"):
        run_async(reconcile([spec, spec], engine, scope=world.scope))
    assert world.running(run_async, engine) == {}


def test_a_held_workload_is_left_as_it_is_and_cannot_also_be_desired(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    held, other = world.workload("held"), world.workload("other")
    world.sync(run_async, engine, held, other)
    before = _ids(world.running(run_async, engine))
    changed = world.workload("held", replicas=2)
    key = (world.org, "main", "held")
    # Held: neither collected (no desired spec) nor scaled; the other workload is reconciled.
    report = run_async(reconcile(world.desired(), engine, scope=world.scope, hold={key}))
    assert report.errors == {}
    assert _ids(world.running(run_async, engine)) == {name: id_ for name, id_ in before.items() if "_held-" in name}
    assert [i.labels[WORKLOAD] for i in world.running(run_async, engine).values()] == ["held"]
    with pytest.raises(ValueError, match="held"):
        run_async(reconcile(world.desired(changed), engine, scope=world.scope, hold={key}))
    assert len(world.running(run_async, engine)) == 1


def test_a_template_that_cannot_start_keeps_the_old_replica_running(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    doc = world.workload("steady")
    world.sync(run_async, engine, doc)
    before = _ids(world.running(run_async, engine))
    doc["spec"]["containers"][0]["command"] = "/no/such/entrypoint"
    report = run_async(reconcile(world.desired(doc), engine, scope=world.scope))
    assert list(report.errors) == [f"{world.org}/main/steady"]
    after = world.running(run_async, engine)
    assert _ids(after) == before and all(i.running for i in after.values())
    del doc["spec"]["containers"][0]["command"]
    assert not world.sync(run_async, engine, doc).changed


def test_a_replica_that_stopped_is_made_again(world: World, engine: CliEngine, run_async: RunAsync) -> None:
    doc = world.workload("again")
    world.sync(run_async, engine, doc)
    (name,) = world.running(run_async, engine)
    podman("stop", "--time", "5", name)
    report = world.sync(run_async, engine, doc)
    assert report.removed == [name] and report.created == [name]
    (info,) = world.running(run_async, engine).values()
    assert info.running
