"""Cron workloads run as jobs: a container run to completion on schedule, each run recorded.

:class:`CronRunner` is called with the cron workloads and their GVCs (:meth:`CronRunner.tick`,
whenever the caller likes: the loop ticks it every second). For each workload and location
of its GVC it:

1. **Follows the active runs.** A run is done when every container of its current attempt has
   ended: ``succeeded`` when all exited 0, else ``failed`` with the first non-zero exit code.
   With ``restartPolicy: OnFailure`` a failed attempt is started again (a new container
   name), up to :data:`MAX_ATTEMPTS` attempts (Kubernetes' ``backoffLimit`` default, 6).
   A run older than ``activeDeadlineSeconds`` is stopped and ``failed`` (``deadline
   exceeded``). A run whose containers are gone is ``failed`` too.
2. **Fires** when :func:`~.cron.due_fire` says so (the workload's ``created`` time is the
   first "last fire"), unless ``suspend``: ``Forbid`` skips the fire while a run is active,
   ``Replace`` stops the active runs (``replaced``) and starts one, ``Allow`` starts one
   beside them.
3. **Keeps ``historyLimit`` finished runs** (their containers stay, for their logs); older
   ones are forgotten and their containers removed.

Run containers carry the identity labels, :data:`JOB_RUN` (the run's name,
``{workload}-{unix time of the fire}``), :data:`JOB_ATTEMPT` and :data:`JOB_REPLICA` (the
replica name the data plane lists it by: the run's name, or ``command-{id}`` for a
``runCronWorkload`` command), and **no** ``plinth.replica`` label, so the reconcile pass never
touches them. Containers of a run this runner does not
know (a new controller process) are adopted as active runs; those of a workload or location
no longer wanted are removed. Records live in memory: :meth:`CronRunner.executions` is the
data a later ``jobExecutions`` status would report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from plinth.runtime.containers.protocol import GVC, LOCATION, ORG, WORKLOAD, ContainerEngine, ContainerInfo, EngineError
from plinth.runtime.controller.cron import JobPolicy, due_fire, job_policy
from plinth.runtime.controller.informer import gvc_locations
from plinth.runtime.controller.plan import REPLICA, Resolver, replica_specs, self_parts

JOB_RUN = "plinth.job-run"
JOB_ATTEMPT = "plinth.job-attempt"
JOB_REPLICA = "plinth.job-replica"
MAX_ATTEMPTS = 6
STOP_TIMEOUT_S = 10.0
JobKey = tuple[str, str, str, str]  # org, gvc, workload, location


@dataclass
class JobRun:
    """One run of a job, as recorded: for a later ``jobExecutions`` report."""

    name: str
    location: str
    scheduled: datetime
    started: datetime
    status: str = "active"  # then succeeded, failed or replaced
    ended: datetime | None = None
    exit_code: int | None = None
    attempts: int = 1
    message: str = ""
    #: The name its containers are listed under as a replica (``JOB_REPLICA``); the run's name
    #: when empty.
    replica: str = ""
    #: The runner's :attr:`CronRunner.changes` once the current attempt's containers were made
    #: (infinite while they are being made): a list of the engine taken before then cannot
    #: judge the run, which it would find without containers.
    settled_at: float = 0

    @property
    def replica_name(self) -> str:
        return self.replica or self.name


def _created(workload: Mapping[str, Any], default: datetime) -> datetime:
    try:
        return datetime.fromisoformat(str(workload["created"]))
    except (KeyError, ValueError):
        return default


class CronRunner:
    """Runs one controller's cron workloads (module docstring)."""

    def __init__(
        self,
        driver: ContainerEngine,
        *,
        scope: Mapping[str, str],
        resolve: Resolver,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.driver, self.scope, self.resolve, self.clock = driver, dict(scope), resolve, clock
        self.runs: dict[JobKey, list[JobRun]] = {}
        self.last_fire: dict[JobKey, datetime] = {}
        #: Engine actions taken (containers started, stopped, removed): a caller that keeps a
        #: list of the containers knows it is out of date when this moved.
        self.changes = 0

    def executions(self) -> dict[str, list[JobRun]]:
        """Runs by ``org/gvc/workload``, oldest first, every location together."""
        out: dict[str, list[JobRun]] = {}
        for key, runs in sorted(self.runs.items()):
            out.setdefault("/".join(key[:3]), []).extend(runs)
        return {k: sorted(v, key=lambda r: r.started) for k, v in out.items()}

    async def tick(
        self,
        workloads: Mapping[tuple[str, str], Mapping[str, Any]],
        gvcs: Mapping[str, Any],
        infos: Iterable[ContainerInfo] | None = None,
    ) -> None:
        """One round over every cron workload (module docstring). ``infos``: the scope's
        containers as listed since this runner's last action (:attr:`changes`); listed here
        when not given."""
        listed_at = self.changes  # what the list below (or the one given) has seen
        by_run: dict[str, list[ContainerInfo]] = {}
        for info in await self.driver.list(self.scope) if infos is None else infos:
            if JOB_RUN in info.labels and REPLICA not in info.labels:
                by_run.setdefault(info.labels[JOB_RUN], []).append(info)
        wanted: set[JobKey] = set()
        for (gvc_name, _), workload in sorted(workloads.items()):
            gvc = gvcs.get(gvc_name)
            if (workload.get("spec") or {}).get("type") != "cron" or gvc is None:
                continue
            org = self_parts(workload)[1]
            for location in gvc_locations(gvc):
                key = (org, gvc_name, str(workload["name"]), location)
                wanted.add(key)
                await self._one(key, workload, gvc, job_policy(workload), by_run, listed_at)
        for infos in by_run.values():
            labels = infos[0].labels
            key = (labels.get(ORG, ""), labels.get(GVC, ""), labels.get(WORKLOAD, ""), labels.get(LOCATION, ""))
            if key not in wanted:
                await self._remove(infos)
        for key in set(self.runs) - wanted:
            del self.runs[key]
            self.last_fire.pop(key, None)

    async def run_now(self, workload: Mapping[str, Any], gvc: Any, location: str, replica: str = "") -> JobRun:
        """Start a run of ``workload`` in ``location`` now, outside its schedule (a
        ``runCronWorkload`` command): followed, kept in the history and removed like the
        scheduled ones. Named as a fire at this second would be (one second later when that
        name is taken), so a later controller adopts it the same way; its containers are
        listed as the replica ``replica`` (default: the run's name)."""
        now = self.clock()
        key = (self_parts(workload)[1], str(gvc.get("name", "")), str(workload["name"]), location)
        runs = self.runs.setdefault(key, [])
        taken = {run.name for run in runs}
        second = int(now.timestamp())
        while f"{workload['name']}-{second}" in taken:
            second += 1
        run = JobRun(f"{workload['name']}-{second}", location, now, now, replica=replica)
        # Recorded before its containers are made: a tick running meanwhile (this is called from
        # the command handler, beside the ticks) must neither adopt them as another run nor
        # judge the run by a list taken before they were made (``settled_at``).
        runs.append(run)
        await self._run_attempt(run, workload, gvc)
        return run

    async def _one(
        self,
        key: JobKey,
        workload: Mapping[str, Any],
        gvc: Any,
        policy: JobPolicy,
        by_run: Mapping[str, list[ContainerInfo]],
        listed_at: float,
    ) -> None:
        now = self.clock()
        runs = self.runs.setdefault(key, [])
        known = {run.name for run in runs}
        for run_name, infos in by_run.items():  # a run started by an earlier controller
            labels = infos[0].labels
            if run_name not in known and tuple(labels.get(k) for k in (ORG, GVC, WORKLOAD, LOCATION)) == key:
                when = datetime.fromtimestamp(int(run_name.rsplit("-", 1)[1]), UTC)
                attempts = max(int(i.labels.get(JOB_ATTEMPT, "1")) for i in infos)
                replica = labels.get(JOB_REPLICA, "")
                runs.append(JobRun(run_name, key[3], when, when, attempts=attempts, message="adopted", replica=replica))
        for run in [r for r in runs if r.status == "active" and r.settled_at <= listed_at]:
            await self._follow(run, workload, gvc, policy, by_run.get(run.name, []), now)
        last = self.last_fire.setdefault(key, _created(workload, now))
        fire = due_fire(policy.schedule, last, now) if policy.schedule else None
        if fire is not None:
            self.last_fire[key] = fire
            active = [r for r in runs if r.status == "active"]
            if not policy.suspend and not (active and policy.concurrency == "Forbid"):
                if policy.concurrency == "Replace":
                    for run in active:
                        await self._finish(
                            run, "replaced", None, "replaced by a newer run", now, by_run.get(run.name, [])
                        )
                runs.append(await self._start(workload, gvc, key[3], fire, now))
        finished = [r for r in runs if r.status != "active"]
        for run in finished[: max(0, len(finished) - policy.history_limit)]:
            runs.remove(run)
            await self._remove(by_run.get(run.name, []))

    async def _follow(
        self,
        run: JobRun,
        workload: Mapping[str, Any],
        gvc: Any,
        policy: JobPolicy,
        infos: list[ContainerInfo],
        now: datetime,
    ) -> None:
        current = [i for i in infos if i.labels.get(JOB_ATTEMPT) == str(run.attempts)]
        deadline = policy.active_deadline_s
        if deadline is not None and (now - run.started).total_seconds() > deadline:
            await self._finish(run, "failed", None, "active deadline exceeded", now, current)
        elif not current:
            await self._finish(run, "failed", None, "its containers are gone", now, current)
        elif all(not i.running and i.state != "created" for i in current):
            code = next((i.exit_code for i in current if i.exit_code), 0)
            if code == 0:
                await self._finish(run, "succeeded", 0, "", now, [])
            elif policy.restart_policy == "OnFailure" and run.attempts < MAX_ATTEMPTS:
                run.attempts += 1
                await self._run_attempt(run, workload, gvc)
            else:
                await self._finish(run, "failed", code, f"exited with code {code}", now, [])

    async def _finish(
        self, run: JobRun, status: str, code: int | None, message: str, now: datetime, stop: list[ContainerInfo]
    ) -> None:
        for info in stop:
            if info.running:
                self.changes += 1
                await self.driver.stop(info.name, STOP_TIMEOUT_S)
        run.status, run.exit_code, run.message, run.ended = status, code, message, now

    async def _start(
        self, workload: Mapping[str, Any], gvc: Any, location: str, fire: datetime, now: datetime
    ) -> JobRun:
        run = JobRun(f"{workload['name']}-{int(fire.timestamp())}", location, fire, now)
        await self._run_attempt(run, workload, gvc)
        return run

    async def _run_attempt(self, run: JobRun, workload: Mapping[str, Any], gvc: Any) -> None:
        """Start the containers of the run's current attempt; a failure fails the run."""
        labels = {**self.scope, JOB_RUN: run.name, JOB_ATTEMPT: str(run.attempts), JOB_REPLICA: run.replica_name}
        run.settled_at = math.inf
        try:
            specs = replica_specs(workload, gvc, run.location, run.name, None, self.resolve, labels)
            for spec in specs:
                job_labels = {k: v for k, v in spec.labels.items() if k != REPLICA}
                job = replace(spec, name=f"{spec.name}_a{run.attempts}", labels=job_labels)
                if not await self.driver.image_present(job.image):
                    await self.driver.pull(job.image)
                self.changes += 1
                await self.driver.run(job)
        except Exception as exc:  # a plan or engine error fails this run, not the controller
            await self._finish(run, "failed", None, f"could not start: {exc}", self.clock(), [])
        finally:
            run.settled_at = self.changes

    async def _remove(self, infos: list[ContainerInfo]) -> None:
        for info in infos:
            self.changes += 1
            try:
                await self.driver.remove(info.name)
            except EngineError:
                pass  # the next tick tries again: the container still carries its labels
