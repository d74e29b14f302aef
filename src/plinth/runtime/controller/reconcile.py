"""Making what runs match what should run: one level-triggered pass through the driver.

:func:`reconcile` compares the desired replicas (every workload's :func:`~.plan.plan_workload`
output, for everything the controller is responsible for) with the replica containers the
driver lists in ``scope`` and acts on the difference. It keeps no state between calls: the
engine's labels are the whole record, so a second call with nothing changed does nothing, and
a new process (or a second instance) adopts what the first one started.

Per container slot (org, GVC, location, replica, container: the labels the plan sets):

- **adopt** a running container whose name and ``plinth.spec-hash`` label are those of the
  desired spec: it is never restarted;
- **create** a missing one (pulling its image only when the engine's store lacks it);
- **replace** one whose digest differs. ``standard`` and ``serverless``: a surge, the new
  container (its name carries the new spec's digest) starts beside the old one, and only once
  it is *running* (readiness probes come later) is the old one stopped and removed.
  ``stateful``: in place, as a Kubernetes StatefulSet does, because its name (and, later, its
  volume) is the replica's stable identity: the old one stops, then the new one starts.
  Slots are replaced one at a time per workload; workloads proceed concurrently;
- a container in the slot that is not running (exited, created) is removed and made again
  (restart back-off comes later);
- **remove** (stop, then remove) every container in scope whose slot is not desired: a
  workload, GVC or org that is gone, a location the GVC left, a replica scaled away.

Only containers the driver lists are seen, and the driver lists only ``plinth.managed=true``
ones; of those, only the ones carrying every ``scope`` label and a :data:`~.plan.REPLICA`
label are this controller's (later job containers, and other Plinth instances' containers
under another scope, are left alone).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from plinth.runtime.containers.protocol import (
    GVC,
    LOCATION,
    MANAGED,
    ORG,
    WORKLOAD,
    ContainerEngine,
    ContainerInfo,
    EngineError,
    ImagePullError,
    ReplicaSpec,
)
from plinth.runtime.controller.plan import CONTAINER, REPLICA, TYPE
from plinth.runtime.controller.pulls import PullBackoff
from plinth.runtime.controller.rollout import RolloutPolicy, batches

#: How long a new container may take to be running before the step counts as failed.
RUNNING_TIMEOUT_S = 60.0
#: How long a retired container gets between SIGTERM and SIGKILL.
STOP_TIMEOUT_S = 10.0
POLL_S = 0.1

Slot = tuple[str, str, str, str, str, str]  # org, gvc, workload, location, replica, container
WorkloadKey = tuple[str, str, str]  # org, gvc, workload
#: Called with the engine names of running containers about to be stopped (the gateway drains them).
Drain = Callable[[Sequence[str]], Awaitable[None]]


@dataclass
class ReconcileReport:
    """What one pass did, by engine container name; ``errors`` by ``org/gvc/workload``."""

    created: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    #: Replicas left down for now by the restart gate (back-off), by engine name: why.
    waiting: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.removed)


class RestartGate(Protocol):
    """Decides when a replica that crashed may start again (the supervisor's back-off)."""

    def crashed(self, slot: Slot, digest: str, reason: str) -> None:
        """The container of ``slot`` running template ``digest`` ended, or never got running."""

    def may_start(self, slot: Slot, digest: str) -> str | None:
        """``None`` when ``slot`` may start a container of ``digest`` now, else why not yet."""

    async def until_ready(self, driver: ContainerEngine, name: str, timeout_s: float) -> str | None:
        """Wait for the running container ``name`` to be ready: ``None``, else why not."""


class StepFailed(Exception):
    """A new container did not reach ``running``; the old one (if any) was kept."""


def slot_of(labels: Mapping[str, str]) -> Slot | None:
    try:
        return (labels[ORG], labels[GVC], labels[WORKLOAD], labels[LOCATION], labels[REPLICA], labels[CONTAINER])
    except KeyError:
        return None


def engine_name(spec: ReplicaSpec, driver: ContainerEngine) -> str:
    """The engine name of the container for ``spec``: the plan's name for ``stateful`` (stable),
    else that name plus a digest of the spec, so the new replica of a rollout can run beside
    the old one and a name says which template it runs."""
    if spec.labels.get(TYPE) == "stateful":
        return spec.name
    return f"{spec.name}_{driver.digest(spec)[:12]}"


async def reconcile(
    desired: Iterable[ReplicaSpec],
    driver: ContainerEngine,
    *,
    scope: Mapping[str, str] | None = None,
    running_timeout_s: float = RUNNING_TIMEOUT_S,
    hold: Collection[WorkloadKey] = (),
    gate: RestartGate | None = None,
    rollouts: Mapping[WorkloadKey, RolloutPolicy] | None = None,
    drain: Drain | None = None,
    pulls: PullBackoff | None = None,
) -> ReconcileReport:
    """One pass (module docstring). Every desired spec must carry every ``scope`` label (the
    plan's ``labels`` argument), or the next pass would not see what this one made. Engine
    errors are reported per workload in :attr:`ReconcileReport.errors`, never raised, so one
    workload's missing image does not stop the others. The containers of a workload in ``hold``
    (``(org, gvc, workload)``: one whose plan could not be made, e.g. a secret it cannot read)
    are left exactly as they are: neither collected nor replaced. With a ``gate``, a container
    of the wanted template that ended is removed and reported to it as a crash, and a slot the
    gate holds back is left down, reported in :attr:`ReconcileReport.waiting`. ``rollouts``
    gives each workload's :class:`~.rollout.RolloutPolicy` (defaults otherwise); ``drain`` is
    told which running containers are about to be stopped, before they are."""
    scope = dict(scope or {})
    report = ReconcileReport()
    wanted: dict[Slot, ReplicaSpec] = {}
    for spec in desired:
        slot = slot_of(spec.labels)
        if slot is None or any(spec.labels.get(k) != v for k, v in scope.items()):
            raise ValueError(f"{spec.name}: a desired spec needs the plan's slot labels and every scope label")
        if slot in wanted:
            raise ValueError(f"{spec.name}: two desired specs for replica {slot[4]} container {slot[5]}")
        if slot[:3] in hold:
            raise ValueError(f"{spec.name}: a desired spec of workload {'/'.join(slot[:3])}, which is held")
        wanted[slot] = spec
    # The images and networks the desired replicas need are looked up (made, pulled) side by
    # side with the list: a replica to create waits for them anyway, and for one adopted they
    # cost nothing once the driver knows them present (it remembers). Awaited before returning.
    images: dict[str, asyncio.Task[None]] = {}
    for spec in wanted.values():
        _image_task(driver, spec.image, images, pulls)
        _network_task(driver, spec, scope, images)
    try:
        await _reconcile(driver, wanted, images, report, scope, running_timeout_s, hold, gate, rollouts, drain, pulls)
    except BaseException:  # cancelled (the controller stops): no pull goes on without the pass
        for task in images.values():
            task.cancel()
        raise
    # Whatever no replica waited on (all adopted): its outcome is the next pass's concern.
    await asyncio.gather(*images.values(), return_exceptions=True)
    return report


async def _reconcile(
    driver: ContainerEngine,
    wanted: Mapping[Slot, ReplicaSpec],
    images: dict[str, asyncio.Task[None]],
    report: ReconcileReport,
    scope: Mapping[str, str],
    running_timeout_s: float,
    hold: Collection[WorkloadKey],
    gate: RestartGate | None,
    rollouts: Mapping[WorkloadKey, RolloutPolicy] | None,
    drain: Drain | None,
    pulls: PullBackoff | None,
) -> None:
    running: dict[Slot, list[ContainerInfo]] = defaultdict(list)
    for info in await driver.list(scope):
        slot = slot_of(info.labels)
        if slot is not None and slot[:3] not in hold:
            running[slot].append(info)

    # Whatever no desired slot claims goes first: orphans, scaled-away replicas.
    unwanted = [info for slot, infos in running.items() if slot not in wanted for info in infos]

    async def collect(info: ContainerInfo) -> None:
        try:
            await _retire(driver, info.name, report)
        except EngineError as exc:
            report.errors["/".join(info.labels[k] for k in (ORG, GVC, WORKLOAD))] = str(exc)

    await asyncio.gather(*(collect(info) for info in unwanted))

    by_workload: dict[WorkloadKey, list[Slot]] = defaultdict(list)
    for slot in wanted:
        by_workload[slot[:3]].append(slot)

    async def one_replica(policy: RolloutPolicy, group: Sequence[Slot], in_place: bool) -> None:
        for slot in group:
            step = _Step(
                driver, report, images, running_timeout_s, gate, scope, in_place, policy.min_ready_s, drain, pulls
            )
            await step.converge(slot, wanted[slot], running.get(slot, []))

    async def one_workload(key: WorkloadKey, slots: Sequence[Slot]) -> None:
        policy = (rollouts or {}).get(key) or RolloutPolicy()
        try:
            for batch in batches(policy, slots, wanted[slots[0]].labels.get(TYPE) == "stateful"):
                outcomes = await asyncio.gather(
                    *(one_replica(policy, group, in_place) for group, in_place in batch), return_exceptions=True
                )
                for outcome in outcomes:
                    if isinstance(outcome, BaseException):
                        raise outcome
        except (EngineError, StepFailed) as exc:
            report.errors["/".join(key)] = str(exc)

    await asyncio.gather(*(one_workload(key, slots) for key, slots in by_workload.items()))


async def _ensure_network(
    driver: ContainerEngine, spec: ReplicaSpec, scope: Mapping[str, str], images: dict[str, asyncio.Task[None]]
) -> None:
    """Make the GVC network ``spec`` joins (labelled with the scope, its org and GVC), once per
    pass (it shares the pass's task cache with images, under a key images never have)."""
    task = _network_task(driver, spec, scope, images)
    if task is not None:
        await asyncio.shield(task)


def _network_task(
    driver: ContainerEngine, spec: ReplicaSpec, scope: Mapping[str, str], images: dict[str, asyncio.Task[None]]
) -> asyncio.Task[None] | None:
    if not spec.network:
        return None
    labels = {**scope, MANAGED: "true", ORG: spec.labels[ORG], GVC: spec.labels[GVC]}
    key = f"network:{spec.network}"
    if key not in images:
        images[key] = asyncio.ensure_future(driver.ensure_network(spec.network, labels))
    return images[key]


async def _ensure_image(
    driver: ContainerEngine, image: str, images: dict[str, asyncio.Task[None]], pulls: PullBackoff | None = None
) -> None:
    """Pull ``image`` unless the engine has it, once per pass however many replicas want it;
    with ``pulls``, a pull that failed is not tried again until its back-off is over."""
    await asyncio.shield(_image_task(driver, image, images, pulls))


def _image_task(
    driver: ContainerEngine, image: str, images: dict[str, asyncio.Task[None]], pulls: PullBackoff | None
) -> asyncio.Task[None]:

    async def fetch() -> None:
        if await driver.image_present(image):
            if pulls is not None:
                pulls.succeeded(image)
            return
        if pulls is None:
            await driver.pull(image)
            return
        pulls.check(image)
        try:
            await driver.pull(image)
        except ImagePullError as exc:
            raise pulls.failed(image, str(exc)) from None
        pulls.succeeded(image)

    if image not in images:
        images[image] = asyncio.ensure_future(fetch())
    return images[image]


@dataclass
class _Step:
    """What one slot's convergence needs from its pass."""

    driver: ContainerEngine
    report: ReconcileReport
    images: dict[str, asyncio.Task[None]]
    running_timeout_s: float
    gate: RestartGate | None
    scope: Mapping[str, str] = field(default_factory=dict)
    #: Stop the old container before the new one starts (a rollout's "unavailable" share).
    in_place: bool = False
    min_ready_s: float = 0.0
    drain: Drain | None = None
    pulls: PullBackoff | None = None

    async def converge(self, slot: Slot, spec: ReplicaSpec, current: Sequence[ContainerInfo]) -> None:
        driver, report = self.driver, self.report
        target = replace(spec, name=engine_name(spec, driver))
        digest = driver.digest(target)
        keep = next((c for c in current if c.name == target.name and c.spec_hash == digest and c.running), None)
        if keep is not None:
            report.adopted.append(keep.name)
            # Leftovers of a rollout that was interrupted between its start and its clean-up.
            for info in current:
                if info is not keep:
                    await _retire(driver, info.name, report)
            return
        if self.gate is not None:
            for info in [c for c in current if not c.running and c.spec_hash == digest]:
                await _retire(driver, info.name, report)
                self.gate.crashed(slot, digest, f"container exited with code {info.exit_code}")
            current = [c for c in current if c.running or c.spec_hash != digest]
            wait = self.gate.may_start(slot, digest)
            if wait is not None:
                report.waiting[target.name] = wait
                return
        # Must go before the new one starts: anything dead, and anything holding the target name
        # (a stateful replica's old container, or one made under another key); everything when
        # the replica is replaced in place.
        replacing = any(c.running for c in current)
        first = [c for c in current if c.name == target.name or not c.running or self.in_place]
        later = [c for c in current if c not in first]
        # The image and the network side by side: two podman commands' start-up overlap.
        await asyncio.gather(
            _ensure_image(driver, target.image, self.images, self.pulls),
            _ensure_network(driver, target, self.scope, self.images),
        )
        for mount in target.volumes:  # made with its labels before the engine would make it bare
            await driver.ensure_volume(mount.volume, dict(mount.labels))
        if self.drain is not None and any(c.running for c in first):
            await self.drain([c.name for c in first if c.running])
        for info in first:
            await _retire(driver, info.name, report)
        stateful = spec.labels.get(TYPE) == "stateful"
        if self.gate is not None and not (later or stateful or replacing or self.in_place):
            # A new replica beside nothing it replaces: started without a look. Whether it keeps
            # running is the gate's to see (the pass's own list, then the prober: one that ends
            # is retired and counted as a crash by the next pass), and nothing waits on it here.
            await driver.start(target)
            report.created.append(target.name)
            return
        started = await driver.run(target)
        report.created.append(target.name)
        try:
            if not started.running:  # ``run`` inspects after its start: no second look if it runs
                await _until_running(driver, target.name, self.running_timeout_s, report)
        except StepFailed as exc:
            if self.gate is not None:
                self.gate.crashed(slot, digest, str(exc))
            raise
        if self.gate is not None and (later or stateful or (self.in_place and replacing)):
            # A surge retires the old replica only once the new one is ready; a stateful
            # workload starts its next replica only once this one is (Kubernetes' OrderedReady).
            why = await self.gate.until_ready(driver, target.name, self.running_timeout_s)
            if why is not None and later:
                await _retire(driver, target.name, report)
                self.gate.crashed(slot, digest, why)
                raise StepFailed(why)
            if why is not None:
                raise StepFailed(why)  # left running, not ready; later replicas wait for a pass
        if self.min_ready_s > 0 and (later or replacing or stateful):
            await asyncio.sleep(self.min_ready_s)  # minReadySeconds: ready for this long counts
        if self.drain is not None and later:
            await self.drain([c.name for c in later])
        for info in later:  # the surge: the new one runs, so the old one may go
            await _retire(driver, info.name, report)


async def _until_running(driver: ContainerEngine, name: str, timeout_s: float, report: ReconcileReport) -> None:
    """Wait for ``name`` to be running; when it ends or times out instead, remove it and raise
    :class:`StepFailed` (the old replica, if any, was not touched)."""
    deadline = time.monotonic() + timeout_s
    while True:
        info = await driver.inspect(name)
        if info is not None and info.running:
            return
        if info is None or info.state in ("exited", "dead") or time.monotonic() > deadline:
            state = "gone" if info is None else f"{info.state}, exit code {info.exit_code}"
            await _retire(driver, name, report)
            raise StepFailed(f"container {name} did not keep running ({state})")
        await asyncio.sleep(POLL_S)


async def _retire(driver: ContainerEngine, name: str, report: ReconcileReport) -> None:
    """Stop gracefully, then remove; both are idempotent in the driver."""
    await driver.stop(name, STOP_TIMEOUT_S)
    await driver.remove(name)
    report.removed.append(name)
