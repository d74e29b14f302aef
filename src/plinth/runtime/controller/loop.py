"""The control loop: the informer's cache planned and reconciled, whenever anything changes.

:class:`ControlLoop` runs an :class:`~.informer.Informer` for one org and, each time it is
woken (a change in the cache, a periodic relist, a retry, the prober), starts a pass: at once
when no pass started within ``debounce_s`` (once the wake-ups pause for :data:`SETTLE_S`: the
writes of one apply land together), else when that window ends, so that a burst of writes
(``cpln apply`` of a stack) coalesces into the next pass (a leading-edge debounce,
:mod:`.debounce`: no wake-up is lost, passes never overlap). A pass:

1. plans every workload of the cache (:func:`~.plan.plan_workload`) on its GVC's locations;
2. calls :func:`~.reconcile.reconcile` once for the whole org, under the scope
   ``{plinth.org: org, **labels}``: containers of the org that no plan wants are collected,
   and nothing outside the scope is touched.

It never acts before the informer has listed both kinds once: an empty cache would mean
"remove everything". Level-triggered: a pass compares the whole cache with the whole engine,
so a missed wake-up costs only time until the next one.

**Errors never end the loop.** A workload whose plan fails (a secret it references, a bad
quantity) is reported in :attr:`ControlLoop.errors` and *held*: its containers are left as they
are, neither collected nor replaced. Engine errors come from the reconcile report the same way,
by ``org/gvc/workload``. Any other exception of a pass is logged. After a pass with errors the
loop wakes itself again after ``retry_s``; the informer's relist wakes it anyway.

**Before each pass** (:meth:`ControlLoop.prepare`) the secrets the workloads reference are
revealed through the API (``secrets.SecretCache``, only those whose version changed) and the
GVCs' ``locationQuery`` are asked of the server (``placement.PlacementCache``). A workload
whose secret reference the server says does not hold (``status.warning``), or whose value the
controller could not read, is held with a message naming the reference, never a value.
After the pass, the networks of GVCs that are gone are removed (``networks.NetworkKeeper``),
and the volumes of volume sets that are gone (``volumes.VolumeKeeper``), and the log lines of
workloads that are gone (``logkeeper.LogKeeper``).

**Reporting.** ``after_pass`` (``reporter.Reporter``) runs at the end of every pass: it posts
what the supervisor observed to the API, the supervisor having seen the pass's own list (the one
the gateway's routes are built from: ``Supervisor.seen``), so the replicas the pass started are
in it. A pass that ends with another already asked for leaves the gateway and the report to that
one (never two passes in a row), and when it changed nothing it holds no debounce window. A
failure is an error of the pass (key ``report``).
When only what the prober sees changed (a readiness verdict, a new container listed), there is
nothing to reconcile: :meth:`ControlLoop.report_observed` loads the gateway's routes and calls
``after_probe`` (``Reporter.after_probe``) for just those workloads, at once, with the last
pass's plan, never during a pass (one lock). Requests coalesce (level-triggered: the report
reads the state when it runs); a failed one wakes the loop, whose pass reports everything.
Without ``after_probe`` the prober wakes the loop instead, as it did before.

Cancelling :meth:`ControlLoop.run` stops the informer and the loop; containers keep running,
to be adopted by the next loop (the driver's spec digest makes that so).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from plinth.runtime.containers.protocol import GVC, ORG, WORKLOAD, ContainerEngine, ContainerInfo, ReplicaSpec
from plinth.runtime.controller.debounce import LeadingDebounce
from plinth.runtime.controller.informer import Informer
from plinth.runtime.controller.jobs import CronRunner
from plinth.runtime.controller.logkeeper import LogKeeper
from plinth.runtime.controller.networks import NetworkKeeper
from plinth.runtime.controller.placement import PlacementCache
from plinth.runtime.controller.plan import CONTAINER, Resolver, plan_workload
from plinth.runtime.controller.prober import probe_forever
from plinth.runtime.controller.probes import Probe, container_probes
from plinth.runtime.controller.pulls import PullBackoff
from plinth.runtime.controller.reconcile import ReconcileReport, reconcile, slot_of
from plinth.runtime.controller.rollout import rollout_policies
from plinth.runtime.controller.secrets import SecretCache, SecretUnavailable
from plinth.runtime.controller.supervisor import Supervisor
from plinth.runtime.controller.volumes import VolumeKeeper
from plinth.runtime.gateway.domains import DEFAULT_BASE_DOMAIN, route_table
from plinth.runtime.gateway.routes import RouteTable
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

#: At most one pass starts within this window: the first wake-up after quiet starts one at
#: once, later ones coalesce into the next, at the window's end (:mod:`.debounce`).
DEBOUNCE_S = 0.1
#: A pass after quiet starts once wake-ups pause this long (the writes of one ``apply`` land
#: together: :mod:`.debounce`).
SETTLE_S = 0.02
#: How soon a pass that left errors is tried again (besides any change or relist).
RETRY_S = 5.0
#: The longest the prober sleeps between rounds (a new container is probed within this).
PROBE_TICK_S = 1.0
#: How long a replica taken out of the gateway keeps running before it is stopped, so that
#: requests already sent to it finish (the platform removes a replica from its load balancer
#: up to 10 s before stopping it).
DRAIN_S = 1.0


#: A hook run after each pass: ``(loop, planned specs, held workloads, the pass's report)``.
AfterPass = Callable[
    ["ControlLoop", list[ReplicaSpec], dict[tuple[str, str, str], str], ReconcileReport], Awaitable[None]
]
#: A hook run when the prober's view of some workloads changed without a pass:
#: ``(loop, {"gvc/name", ...})`` (``Reporter.after_probe``).
AfterProbe = Callable[["ControlLoop", Collection[str]], Awaitable[None]]


def refuse_secrets(reference: str) -> str:
    """A resolver that gives no secret value (a controller that must not read secrets)."""
    raise SecretUnavailable(f"{reference}: secret values are not given to containers by this controller")


class ControlLoop:
    """Plans and reconciles one org's workloads whenever the informer says something changed."""

    def __init__(
        self,
        informer: Informer,
        driver: ContainerEngine,
        *,
        labels: Mapping[str, str] | None = None,
        resolve: Resolver | None = None,
        debounce_s: float = DEBOUNCE_S,
        retry_s: float = RETRY_S,
        supervisor: Supervisor | None = None,
        gateway: Callable[[RouteTable], Awaitable[None]] | None = None,
        base_domain: str = DEFAULT_BASE_DOMAIN,
        after_pass: AfterPass | None = None,
        after_probe: AfterProbe | None = None,
        logs: LogKeeper | None = None,
    ) -> None:
        self.informer = informer
        self.driver = driver
        self.org = informer.org
        self.scope = {ORG: self.org, **dict(labels or {})}
        #: Secret values through the API's reveal, and GVC placements by ``locationQuery``.
        self.secrets = SecretCache(informer.client, self.org)
        self.placements = PlacementCache(informer.client, self.org)
        self.networks = NetworkKeeper()
        self.volumes = VolumeKeeper()
        self.resolve: Resolver = resolve or self.secrets.resolve
        self.debounce_s = debounce_s
        self.retry_s = retry_s
        self.passes = 0
        #: The errors of the last pass, by ``org/gvc/workload``.
        self.errors: dict[str, str] = {}
        self.last_report: ReconcileReport | None = None
        #: Probes, restart back-off and what was observed per workload (``supervisor.observed()``).
        self.supervisor = supervisor or Supervisor()
        #: Failed image pulls and their back-off (``pulls.py``).
        self.pulls = PullBackoff()
        self.supervisor.probes_for = self._probes_for
        #: Loads a route table into the gateway (``lambda t: caddy.apply(t, listen)``), if any.
        self.gateway, self.base_domain = gateway, base_domain
        self._applied: RouteTable | None = None
        #: Called at the end of every pass (``reporter.Reporter``: what was observed, to the API).
        self.after_pass = after_pass
        #: Called by :meth:`report_observed` (what the prober saw, to the API, without a pass).
        self.after_probe = after_probe
        #: The last pass's plan: ``(specs, held, report)``, what a report between passes reads.
        self.last_plan: tuple[list[ReplicaSpec], dict[tuple[str, str, str], str], ReconcileReport] | None = None
        #: Reports made between passes (:meth:`report_observed`), for tests and the bench.
        self.quick_reports = 0
        #: Set by a pass that changed containers, and by the engine's events: the prober's
        #: next round starts now instead of at its next tick.
        self.probe_soon = asyncio.Event()
        #: The engine's events since a pass began: the prober's round runs after the pass.
        self._engine_moved = False
        #: The last pass left the gateway and the report to the next (:meth:`_run_pass`).
        self._deferred = False
        #: When the pass running now started (``time.monotonic()``), ``None`` between passes.
        self.pass_started: float | None = None
        #: Drops the log lines of the org's workloads that are gone (``logkeeper.py``), if any.
        self.logs = logs
        #: Cron workloads' runs (``cron.executions()``), ticked every :data:`PROBE_TICK_S`.
        self.cron = CronRunner(driver, scope=self.scope, resolve=self.resolve)
        self._debounce = LeadingDebounce(debounce_s, settle_s=min(SETTLE_S, debounce_s))
        #: Held by a pass and by a report between passes: they never overlap.
        self._acting = asyncio.Lock()
        self._to_report: set[str] = set()
        self._report_wake = asyncio.Event()
        informer.on_change = self.wake

    def wake(self) -> None:
        """Ask for a pass (wake-ups coalesce: module docstring)."""
        self._debounce.wake()

    def engine_changed(self) -> None:
        """The engine's events say what runs changed: the prober's next round now, unless a
        pass runs (its own podman commands would contend with the round's list for podman's
        lock; the pass's end starts the round instead)."""
        if self._acting.locked():
            self._engine_moved = True
        else:
            self.probe_soon.set()

    def report_observed(self, workloads: Collection[str]) -> None:
        """The prober's view of ``workloads`` (``gvc/name``) changed, but nothing needs
        reconciling: report them now, without a pass (module docstring). Without an
        ``after_probe`` hook, wake the loop instead."""
        if self.after_probe is None:
            self.wake()
            return
        self._to_report.update(workloads)
        self._report_wake.set()

    async def _report_forever(self) -> None:
        """Run the reports :meth:`report_observed` asked for, one at a time, never during a
        pass; requests made while one runs make one more."""
        while True:
            await self._report_wake.wait()
            async with self._acting:
                self._report_wake.clear()
                workloads, self._to_report = self._to_report, set()
                if self.last_plan is None:
                    continue  # no pass yet: the first one reports everything
                try:
                    if self.gateway is not None:
                        await self._load_routes()  # first: a workload reported ready is served
                    assert self.after_probe is not None
                    await self.after_probe(self, workloads)
                    self.quick_reports += 1
                except Exception:  # the pass reports everything, and retries what fails
                    log.exception("org %s: reporting what the prober saw failed; a pass will", self.org)
                    self.wake()

    def desired(self) -> tuple[list[ReplicaSpec], dict[tuple[str, str, str], str]]:
        """What the cache wants, and the workloads held by a plan error (module docstring)."""
        specs: list[ReplicaSpec] = []
        held: dict[tuple[str, str, str], str] = {}
        labels = {k: v for k, v in self.scope.items() if k != ORG}
        for (gvc_name, name), workload in sorted(self.informer.workloads.items()):
            key = (self.org, gvc_name, name)
            gvc: Mapping[str, Any] | None = self.informer.gvcs.get(gvc_name)
            if gvc is None:  # the GVC's event is not in yet: leave its containers until it is
                held[key] = f"GVC {gvc_name} is not known yet"
                continue
            try:
                locations = self.placements.locations(gvc)
                specs += plan_workload(
                    workload, gvc, locations, resolve=self.resolve, labels=labels, files=self.secrets.files
                )
            except Exception as exc:  # any plan error is this workload's alone
                held[key] = str(exc)
        return specs, held

    async def prepare(self) -> None:
        """Reveal the secrets and ask the location queries the next plan needs (module docstring)."""
        await self.secrets.refresh(self.informer.workloads.values(), self.informer.secrets)
        await self.placements.refresh(self.informer.gvcs, self.informer.locations_state())

    async def run_pass(self) -> ReconcileReport:
        """One plan-and-reconcile of the whole org (the informer must be synced); never at the
        same time as another, or as a report between passes."""
        async with self._acting:
            self._engine_moved = False
            self.pass_started = time.monotonic()
            try:
                report = await self._run_pass()
            finally:
                self.pass_started = None
            if self._deferred and not report.changed:
                self._debounce.release()  # it did nothing: the next one starts without the window
        if report.changed or self._engine_moved:
            self.probe_soon.set()  # see the new containers now, not at the prober's next tick
        return report

    async def _run_pass(self) -> ReconcileReport:
        await self.prepare()
        specs, held = self.desired()
        self.networks.planned(specs, GVC)
        self.volumes.planned(specs)
        rollouts = rollout_policies(self.informer.workloads.values(), self.org)
        report = await reconcile(
            specs,
            self.driver,
            scope=self.scope,
            hold=set(held),
            gate=self.supervisor,
            pulls=self.pulls,
            rollouts=rollouts,
            drain=self._drain if self.gateway is not None else None,
        )
        self.supervisor.retain([slot for spec in specs if (slot := slot_of(spec.labels))], held)
        report.errors.update({"/".join(key): message for key, message in held.items()})
        report.errors.update(self.placements.errors)
        report.errors.update(await self.networks.collect(self.driver, set(self.informer.gvcs)))
        report.errors.update(
            await self.volumes.collect(self.driver, self.org, self.scope, set(self.informer.volume_sets))
        )
        if self.logs is not None:
            report.errors.update(await self.logs.collect(self.org, set(self.informer.workloads)))
        self.last_report = report
        self.last_plan = (specs, held, report)
        self.errors = dict(report.errors)
        if self._debounce.pending and not self._deferred:
            # Another pass is asked for already (the rest of an apply's writes came in while
            # this one ran): it loads the routes and reports, from a newer cache, sooner than
            # this one would finish doing it. Never twice in a row, so writes that keep coming
            # never hold the gateway and the reports back.
            self._deferred = True
        else:
            self._deferred = False
            await self._update_gateway(report)
            if self.after_pass is not None:
                try:
                    await self.after_pass(self, specs, held, report)
                except Exception as exc:  # a failed report must not end the loop: retried
                    report.errors["report"] = str(exc)
        self.passes += 1  # last: a reader that sees the count sees the pass's report
        if report.changed or report.errors:
            log.info(
                "org %s: %d created, %d removed, %d adopted, errors: %s",
                self.org,
                len(report.created),
                len(report.removed),
                len(report.adopted),
                report.errors or "none",
            )
        return report

    async def _drain(self, names: Sequence[str]) -> None:
        """Before a rollout stops running containers, load routes to the ready replicas (the
        new ones included) without them, so no request is sent to a replica that is going."""
        try:
            await self._load_routes(exclude=names)
        except Exception:  # the pass goes on; the gateway retries on another upstream
            log.exception("org %s: draining %s from the gateway failed", self.org, ", ".join(names))
            return
        await asyncio.sleep(DRAIN_S)  # requests in flight to them finish first

    async def _load_routes(self, exclude: Sequence[str] = (), *, observe: bool = False) -> None:
        """Load the routes of the cache's domains and workloads to the ready replicas, as the
        engine lists them now (not as the prober last saw them: a rollout just changed them).
        ``observe`` (a pass): the supervisor observes that list too (``Supervisor.seen``), so
        the pass's report counts the containers it started, ready when they need no probe."""
        assert self.gateway is not None
        ready: dict[tuple[str, str, int], list[int]] = {}
        infos = await self.driver.list(self.scope)
        if observe:
            self.supervisor.seen(infos)
        for info in infos:
            if info.name not in exclude and slot_of(info.labels) and self.supervisor.is_ready(info):
                for container_port, host_port in sorted(info.ports.items()):
                    ready.setdefault((info.labels[GVC], info.labels[WORKLOAD], container_port), []).append(host_port)
        table = route_table(
            self.informer.domains.values(),
            self.informer.workloads.values(),
            self.informer.gvcs,
            ready,
            base_domain=self.base_domain,
        )
        if table != self._applied:
            # Until it answers, what the gateway holds is unknown (a load it refused, or one it
            # took but whose answer was lost): the next load is sent whatever it holds.
            self._applied = None
            await self.gateway(table)
            self._applied = table

    async def _update_gateway(self, report: ReconcileReport) -> None:
        """Load the routes into the gateway when they differ from what it was last given; a
        refusal is an error of the pass."""
        if self.gateway is None:
            return
        try:
            await self._load_routes(observe=True)
        except Exception as exc:  # the gateway's error must not end the loop
            report.errors["gateway"] = str(exc)

    def _probes_for(self, info: ContainerInfo) -> tuple[Probe | None, Probe | None]:
        workload = self.informer.workloads.get((info.labels[GVC], info.labels[WORKLOAD]))
        return container_probes(workload, info.labels[CONTAINER]) if workload else (None, None)

    def job_states(self) -> set[tuple[str, str, str, int]]:
        """Each cron run's name, status and attempts, to see a tick change what is reported."""
        return {(key, r.name, r.status, r.attempts) for key, runs in self.cron.executions().items() for r in runs}

    async def probe_forever(self) -> None:
        """Probe the scope's containers whenever a probe is due (at least every
        :data:`PROBE_TICK_S`), listing them only when the engine's events (or the controller's
        own actions) say something changed; wake the loop when a verdict changes, a container
        has ended or a replica's back-off ends. Each round also ticks the cron jobs (:mod:`.prober`)."""
        await probe_forever(self, PROBE_TICK_S)

    async def run(self) -> None:
        """Run until cancelled (module docstring); never ends on an error of a pass."""
        informer = asyncio.create_task(self.informer.run())
        retry: asyncio.TimerHandle | None = None
        prober: asyncio.Task[None] | None = None
        reporter: asyncio.Task[None] | None = None
        try:
            await asyncio.wait(
                [asyncio.ensure_future(self.informer.wait_synced()), informer],
                return_when=asyncio.FIRST_COMPLETED,
            )
            if informer.done():
                informer.result()  # the informer ended without being cancelled: say why
            prober = asyncio.create_task(self.probe_forever())
            reporter = asyncio.create_task(self._report_forever())
            while True:
                await self._debounce.next_pass()  # at once after quiet; a burst coalesces
                if retry is not None:
                    retry.cancel()
                    retry = None
                try:
                    report = await self.run_pass()
                except Exception:
                    log.exception("org %s: reconcile pass failed; retrying", self.org)
                    retry = asyncio.get_running_loop().call_later(self.retry_s, self.wake)
                    continue
                if report.errors:
                    retry = asyncio.get_running_loop().call_later(self.retry_s, self.wake)
        finally:
            if retry is not None:
                retry.cancel()
            await cancel_and_wait(informer)
            if prober is not None:
                await cancel_and_wait(prober)
            if reporter is not None:
                await cancel_and_wait(reporter)
