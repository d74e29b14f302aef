"""What the controller observes of its replicas: probes, restarts with back-off, readiness.

:class:`Supervisor` is the reconcile pass's :class:`~.reconcile.RestartGate` and the prober:

- **Back-off.** A replica whose container of the wanted template ended (or never got running)
  counts one restart, and may start again only after ``base_s * 2**(restarts - 1)``, capped at
  ``cap_s`` (Kubernetes' CrashLoopBackOff: 10 s doubling to 300 s). A new template (another
  spec digest) starts afresh: zero restarts, no wait. Counts are kept in memory, by slot: a new
  controller process starts them at zero.
- **Probes** (:meth:`probe`). Each running container's readiness and liveness probes
  (:mod:`.probes`) run when due. A container whose liveness probe reached its failure
  threshold is stopped; the next pass sees it ended, counts a restart and starts it again
  under the back-off. A container is *ready* once running with its readiness probe passing, or
  once running when it has no readiness probe.
- **Observation** (:meth:`observed`): per workload (``org/gvc/workload``), each replica's
  name, location, readiness, restarts, the template it runs (the first 12 hex digits of its
  spec digest) and a message saying why it is not ready. Plain data for a status reporter; it
  is not written to the API here. :meth:`ready_ports` gives the gateway's
  :data:`~plinth.runtime.gateway.domains.ReadyPorts`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from plinth.runtime.containers.protocol import GVC, WORKLOAD, ContainerEngine, ContainerInfo
from plinth.runtime.controller.probes import Probe, ProbeTracker, check
from plinth.runtime.controller.reconcile import Slot, slot_of

BACKOFF_BASE_S = 10.0
BACKOFF_CAP_S = 300.0
#: The probes of one container: (readiness, liveness), either may be ``None``.
ProbesFor = Callable[[ContainerInfo], tuple[Probe | None, Probe | None]]


@dataclass
class _Restarts:
    digest: str
    count: int = 0
    not_before: float = 0.0
    reason: str = ""
    #: Why the controller itself stopped the container (a failed liveness probe), if it did.
    stopped_because: str = ""


@dataclass
class _Watched:
    id: str
    readiness: ProbeTracker | None
    liveness: ProbeTracker | None
    #: When watching began (the supervisor's clock): a list older than that cannot say it is gone.
    since: float

    @property
    def probes(self) -> tuple[Probe | None, Probe | None]:
        return (self.readiness.probe if self.readiness else None, self.liveness.probe if self.liveness else None)


@dataclass(frozen=True)
class ReplicaObservation:
    """One replica (one container of it) as last observed."""

    name: str
    location: str
    replica: str
    ready: bool
    restarts: int
    template: str
    message: str = ""
    #: The container of the replica this is (a replica of several containers has one each).
    container: str = ""


@dataclass
class WorkloadObservation:
    replicas: list[ReplicaObservation] = field(default_factory=list)

    @property
    def ready(self) -> int:
        return sum(r.ready for r in self.replicas)

    @property
    def restarts(self) -> int:
        return sum(r.restarts for r in self.replicas)

    @property
    def message(self) -> str:
        return next((f"{r.replica}: {r.message}" for r in self.replicas if r.message), "")


class Supervisor:
    """Back-off gate, prober and observer of one controller's containers (module docstring)."""

    def __init__(
        self,
        *,
        base_s: float = BACKOFF_BASE_S,
        cap_s: float = BACKOFF_CAP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_s, self.cap_s, self.clock = base_s, cap_s, clock
        self._restarts: dict[Slot, _Restarts] = {}
        self._watched: dict[str, _Watched] = {}
        self._infos: list[ContainerInfo] = []
        self._ready_names: set[str] = set()
        #: Container name -> ``org/gvc/workload`` as last probed (to name a container gone).
        self._workload_of: dict[str, str] = {}
        #: The workloads whose verdicts the last :meth:`probe` changed (``org/gvc/workload``).
        self.changed: set[str] = set()
        #: The probes of a container, for :meth:`until_ready` (the loop sets it).
        self.probes_for: ProbesFor | None = None

    # -- the restart gate ------------------------------------------------------------------
    def _entry(self, slot: Slot, digest: str) -> _Restarts:
        entry = self._restarts.get(slot)
        if entry is None or entry.digest != digest:  # a new template starts afresh
            entry = self._restarts[slot] = _Restarts(digest)
        return entry

    def crashed(self, slot: Slot, digest: str, reason: str) -> None:
        entry = self._entry(slot, digest)
        entry.count += 1
        entry.reason, entry.stopped_because = entry.stopped_because or reason, ""
        entry.not_before = self.clock() + min(self.cap_s, self.base_s * 2 ** (entry.count - 1))

    def may_start(self, slot: Slot, digest: str) -> str | None:
        entry = self._entry(slot, digest)
        left = entry.not_before - self.clock()
        if left <= 0:
            return None
        return f"back-off {left:.0f} s restarting failed container ({entry.reason}; {entry.count} restarts)"

    def next_restart(self) -> float | None:
        """When the earliest held-back slot may start (clock time), for the loop's wake-up."""
        times = [e.not_before for e in self._restarts.values() if e.not_before > self.clock()]
        return min(times, default=None)

    # -- probes ----------------------------------------------------------------------------
    async def probe(
        self,
        driver: ContainerEngine,
        infos: Iterable[ContainerInfo],
        probes_for: ProbesFor,
        listed_at: float,
    ) -> bool:
        """Run every due probe of the running ``infos``; stop a container whose liveness failed.
        Answers whether anything changed (a readiness verdict, a container stopped);
        :attr:`changed` names the workloads (``org/gvc/workload``) whose verdicts changed.

        ``listed_at`` (this supervisor's clock) is when the list ``infos`` was asked for: the
        prober may probe an older list while a pass starts containers, and a container watched
        since (by the pass's :meth:`until_ready` or :meth:`seen`) is not in it, yet not gone. Its
        watch is kept, so the gateway's next load still sees it ready; only watches older than
        the list are dropped for containers the list does not show running."""
        self._infos = [i for i in infos if slot_of(i.labels) is not None]
        now = self.clock()
        running = {i.name: i for i in self._infos if i.running}
        self._forget_gone(set(running), listed_at)
        changed = False

        async def one(info: ContainerInfo) -> bool:
            if await verdict(info):
                touched.add(info.name)
                return True
            return False

        async def verdict(info: ContainerInfo) -> bool:
            watched = self._watch(info, probes_for(info), now)
            before = watched.readiness.passing if watched.readiness else None
            for tracker in (watched.readiness, watched.liveness):
                if tracker is not None and tracker.due(now):
                    tracker.record(await check(tracker.probe, driver, info), self.clock())
            if watched.liveness is not None and watched.liveness.passing is False:
                slot = slot_of(info.labels)
                assert slot is not None
                await driver.stop(info.name, 10)
                self._entry(
                    slot, info.spec_hash or ""
                ).stopped_because = f"liveness probe failed: {watched.liveness.message}"
                return True
            return (watched.readiness.passing if watched.readiness else None) != before

        ready_before = self._ready_names
        touched: set[str] = set()
        for result in await asyncio.gather(*(one(info) for info in running.values())):
            changed |= result
        self._ready_names = {i.name for i in self._infos if self.is_ready(i)}
        touched |= self._ready_names ^ ready_before
        workloads = {i.name: "/".join(slot[:3]) for i in self._infos if (slot := slot_of(i.labels))}
        self.changed = {workloads.get(name) or self._workload_of.get(name, "") for name in touched} - {""}
        self._workload_of = workloads
        return changed or self._ready_names != ready_before

    def seen(self, infos: Iterable[ContainerInfo]) -> None:
        """The scope's containers as the engine lists them now (a pass's own list, after it
        started containers): observed from now on, and each new running one watched (its
        probes start counting), without probing; so a container without a readiness probe is
        ready as soon as a list shows it running, not a prober round later. Verdicts are left
        to :meth:`probe`, whose next round reports any change this made (it compares with its
        own last round)."""
        self._infos = [i for i in infos if slot_of(i.labels) is not None]
        if self.probes_for is None:
            return
        now = self.clock()
        for info in self._infos:
            if info.running:
                self._watch(info, self.probes_for(info), now)

    def _watch(self, info: ContainerInfo, probes: tuple[Probe | None, Probe | None], now: float) -> _Watched:
        watched = self._watched.get(info.name)
        if watched is None or watched.id != info.id or watched.probes != probes:
            # A new container, or new probes for this one (probes are not part of the
            # container's spec, so changing them does not restart it): start counting again.
            readiness, liveness = probes
            watched = self._watched[info.name] = _Watched(
                info.id,
                ProbeTracker(readiness, now) if readiness else None,
                ProbeTracker(liveness, now) if liveness else None,
                now,
            )
        return watched

    def _forget_gone(self, running: set[str], listed_at: float) -> None:
        """Stop watching the containers a list does not show running, unless watched since the
        list was asked for (``listed_at``)."""
        for name in set(self._watched) - running:
            if self._watched[name].since <= listed_at:
                del self._watched[name]

    async def until_ready(self, driver: ContainerEngine, name: str, timeout_s: float) -> str | None:
        """Wait until the container ``name`` passes its readiness probe (at once without one,
        or when no :attr:`probes_for` is set): ``None`` when ready, else why not, after
        ``timeout_s`` at most. The reconcile pass calls it before retiring the old replica of
        a surge, and between the replicas of a stateful workload."""
        deadline = time.monotonic() + timeout_s
        while True:
            info = await driver.inspect(name)
            if info is None or not info.running:
                return f"container {name} ended before it was ready"
            probes = self.probes_for(info) if self.probes_for is not None else (None, None)
            tracker = self._watch(info, probes, self.clock()).readiness
            if tracker is None:
                return None
            if tracker.due(self.clock()):
                tracker.record(await check(tracker.probe, driver, info), self.clock())
            if tracker.passing:
                return None
            if time.monotonic() > deadline:
                return f"container {name} was not ready within {timeout_s:g} s: {tracker.message or 'no probe yet'}"
            await asyncio.sleep(min(1.0, max(0.05, tracker.next_due() - self.clock())))

    def next_probe(self) -> float | None:
        times = [t.next_due() for w in self._watched.values() for t in (w.readiness, w.liveness) if t is not None]
        return min(times, default=None)

    # -- observation -----------------------------------------------------------------------
    def is_ready(self, info: ContainerInfo) -> bool:
        watched = self._watched.get(info.name)
        if not info.running or watched is None or watched.id != info.id:
            return False
        if watched.liveness is not None and watched.liveness.passing is False:
            return False  # being restarted
        return watched.readiness is None or watched.readiness.passing is True

    def _message(self, info: ContainerInfo, slot: Slot) -> str:
        watched = self._watched.get(info.name)
        if not info.running:
            entry = self._restarts.get(slot)
            return entry.reason if entry else f"container is {info.state}"
        if watched is not None and watched.liveness is not None and watched.liveness.passing is False:
            return f"liveness probe failed: {watched.liveness.message}"
        if watched is not None and watched.readiness is not None and watched.readiness.passing is not True:
            return watched.readiness.message or "readiness probe has not passed yet"
        return ""

    def observed(self) -> dict[str, WorkloadObservation]:
        """Per ``org/gvc/workload``, each replica container last seen, and each replica held
        down by the back-off (no container then: ``name`` is empty) (module docstring)."""
        result: dict[str, WorkloadObservation] = {}
        seen: set[Slot] = set()
        for info in self._infos:
            slot = slot_of(info.labels)
            assert slot is not None
            seen.add(slot)
            entry = self._restarts.get(slot)
            ready = self.is_ready(info)
            replica = ReplicaObservation(
                name=info.name,
                location=slot[3],
                replica=slot[4],
                ready=ready,
                restarts=entry.count if entry is not None and entry.digest == info.spec_hash else 0,
                template=(info.spec_hash or "")[:12],
                message="" if ready else self._message(info, slot),
                container=slot[5],
            )
            result.setdefault("/".join(slot[:3]), WorkloadObservation()).replicas.append(replica)
        for slot, entry in self._restarts.items():
            if slot not in seen and entry.count:
                message = self.may_start(slot, entry.digest) or entry.reason
                held = ReplicaObservation("", slot[3], slot[4], False, entry.count, entry.digest[:12], message, slot[5])
                result.setdefault("/".join(slot[:3]), WorkloadObservation()).replicas.append(held)
        for observation in result.values():
            observation.replicas.sort(key=lambda r: (r.location, r.replica, r.name))
        return result

    def retain(self, slots: Iterable[Slot], held: Iterable[tuple[str, str, str]] = ()) -> None:
        """Forget the restart counts of every slot neither in ``slots`` (desired) nor of a
        ``held`` workload (``(org, gvc, workload)``, left as it is)."""
        keep, kept_workloads = set(slots), set(held)
        for slot in set(self._restarts) - keep:
            if slot[:3] not in kept_workloads:
                del self._restarts[slot]

    def ready_ports(self) -> Mapping[tuple[str, str, int], list[int]]:
        """``(gvc, workload, container port)`` to the 127.0.0.1 ports of ready containers."""
        ports: dict[tuple[str, str, int], list[int]] = {}
        for info in self._infos:
            if self.is_ready(info):
                for container_port, host_port in sorted(info.ports.items()):
                    ports.setdefault((info.labels[GVC], info.labels[WORKLOAD], container_port), []).append(host_port)
        return ports
