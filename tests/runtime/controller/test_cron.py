"""Cron schedules and job policy (pure), then jobs run to completion in real podman under a
clock the test moves: a run recorded with its exit code, each concurrency policy, the active
deadline, restartPolicy OnFailure, historyLimit and suspend."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from plinth.runtime.containers import CliEngine
from plinth.runtime.controller.cron import JobPolicy, due_fire, every_interval, job_policy, next_fire
from plinth.runtime.controller.jobs import JOB_REPLICA, JOB_RUN, CronRunner, JobRun
from tests.aio import RunAsync
from tests.runtime.controller.conftest import LOCATION, READY_WAIT_S, World

T0 = datetime(2026, 1, 5, 12, 0, 30, tzinfo=UTC)


def test_job_policy_defaults_and_values() -> None:
    assert job_policy({"spec": {"job": {"schedule": "* * * * *"}}}) == JobPolicy("* * * * *")
    doc = {
        "spec": {
            "job": {
                "schedule": "@hourly",
                "concurrencyPolicy": "Replace",
                "historyLimit": 2,
                "restartPolicy": "OnFailure",
                "activeDeadlineSeconds": 30,
            },
            "defaultOptions": {"suspend": True},
        }
    }
    assert job_policy(doc) == JobPolicy("@hourly", "Replace", 2, "OnFailure", 30.0, True)


def test_due_fire_collapses_missed_fires_into_the_latest() -> None:
    assert due_fire("* * * * *", T0, T0 + timedelta(seconds=20)) is None
    assert due_fire("* * * * *", T0, T0 + timedelta(seconds=30)) == datetime(2026, 1, 5, 12, 1, tzinfo=UTC)
    assert due_fire("*/5 * * * *", T0, T0 + timedelta(hours=1)) == datetime(2026, 1, 5, 13, 0, tzinfo=UTC)
    assert due_fire("@midnight", T0, T0 + timedelta(days=1)) == datetime(2026, 1, 6, tzinfo=UTC)
    assert next_fire("0 9 * * mon", T0) == datetime(2026, 1, 12, 9, 0, tzinfo=UTC)  # 5 Jan 2026 is a Monday


def test_every_schedules_count_from_the_last_fire() -> None:
    assert every_interval("@every 1h30m") == timedelta(minutes=90)
    assert due_fire("@every 90s", T0, T0 + timedelta(seconds=100)) == T0 + timedelta(seconds=90)
    assert due_fire("@every 90s", T0, T0 + timedelta(seconds=80)) is None
    assert next_fire("@every 2m", T0) == T0 + timedelta(minutes=2)
    with pytest.raises(ValueError, match="not a duration"):
        every_interval("@every soon")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class Jobs:
    """One cron workload of a test, its runner and the test's clock."""

    def __init__(self, world: World, engine: CliEngine, run_async: RunAsync, script: str, **job: Any) -> None:
        self.world, self.engine, self.run_async, self.clock = world, engine, run_async, Clock()
        self.doc = world.workload("job", type_="cron")
        self.doc["created"] = T0.isoformat()
        self.doc["spec"]["containers"][0].update(command="sh", args=["-c", script])
        self.doc["spec"]["job"] = {"schedule": "* * * * *", **job}
        gvc: dict[str, Any] = {"kind": "gvc", "name": "main", "alias": "x"}
        gvc["spec"] = {"staticPlacement": {"locationLinks": [f"//location/{LOCATION}"]}}
        self.gvcs = {"main": gvc}
        self.runner = CronRunner(engine, scope=world.scope, resolve=lambda ref: ref, clock=self.clock)

    def tick(self, advance_s: float = 0, present: bool = True) -> list[JobRun]:
        self.clock.now += timedelta(seconds=advance_s)
        workloads = {("main", "job"): self.doc} if present else {}
        self.run_async(self.runner.tick(workloads, self.gvcs))
        return self.runner.executions().get(f"{self.world.org}/main/job", [])

    def until(self, check: Any, what: str) -> list[JobRun]:
        deadline = time.monotonic() + READY_WAIT_S
        while not check(runs := self.tick()):
            assert time.monotonic() < deadline, f"{what}: {runs}"
            time.sleep(0.2)
        return runs

    def containers(self) -> list[str]:
        return sorted(i.labels[JOB_RUN] for i in self.run_async(self.engine.list(self.world.scope)))


@pytest.fixture
def jobs_of(world: World, engine: CliEngine, run_async: RunAsync) -> Any:
    made: list[Jobs] = []

    def make(script: str, **job: Any) -> Jobs:
        made.append(Jobs(world, engine, run_async, script, **job))
        return made[-1]

    yield make
    for jobs in made:
        jobs.tick(present=False)  # a workload that is gone: its run containers are removed
    assert not run_async(engine.list(world.scope))


def test_a_run_is_recorded_with_its_exit_code_and_history_is_limited(jobs_of: Any) -> None:
    jobs = jobs_of("exit 0", historyLimit=1)
    assert jobs.tick(20) == []  # 12:00:50: nothing due since 12:00:30
    (run,) = jobs.tick(15)  # 12:01:05: the 12:01 fire
    assert (run.name, run.status, run.scheduled) == (
        f"job-{int(datetime(2026, 1, 5, 12, 1, tzinfo=UTC).timestamp())}",
        "active",
        datetime(2026, 1, 5, 12, 1, tzinfo=UTC),
    )
    (run,) = jobs.until(lambda runs: runs[0].status != "active", "the run ends")
    assert (run.status, run.exit_code, run.ended is not None) == ("succeeded", 0, True)
    runs = jobs.tick(60)  # 12:02:05: a second run; history keeps one finished run
    assert [r.status for r in runs] == ["succeeded", "active"]
    runs = jobs.until(lambda runs: runs[-1].status != "active", "the second run ends")
    assert len(runs) == 1 and jobs.containers() == [runs[0].name]  # the first run's container went


def test_a_failing_run_is_recorded_failed_with_its_exit_code(jobs_of: Any) -> None:
    never = jobs_of("exit 3")
    never.tick(35)
    (run,) = never.until(lambda runs: runs[0].status != "active", "the run fails")
    assert (run.status, run.exit_code, run.attempts, run.message) == ("failed", 3, 1, "exited with code 3")


def test_on_failure_starts_attempts_until_the_limit(jobs_of: Any) -> None:
    jobs = jobs_of("exit 4", restartPolicy="OnFailure")
    jobs.tick(35)
    (run,) = jobs.until(lambda runs: runs[0].status != "active", "the attempts end")
    assert (run.status, run.exit_code, run.attempts) == ("failed", 4, 6)


@pytest.mark.parametrize(
    ("policy", "statuses"),
    [("Forbid", ["active"]), ("Replace", ["replaced", "active"]), ("Allow", ["active", "active"])],
)
def test_concurrency_policies(jobs_of: Any, policy: str, statuses: list[str]) -> None:
    jobs = jobs_of("sleep 60", concurrencyPolicy=policy)
    jobs.tick(35)  # 12:01 fires
    runs = jobs.tick(60)  # 12:02 fires while the first still runs
    assert [r.status for r in runs] == statuses


def test_the_active_deadline_stops_a_run_and_suspend_fires_nothing(jobs_of: Any) -> None:
    jobs = jobs_of("sleep 60", activeDeadlineSeconds=5)
    jobs.tick(35)
    (run,) = jobs.tick(6)
    assert (run.status, run.message) == ("failed", "active deadline exceeded")
    jobs.doc["spec"]["defaultOptions"] = {"suspend": True}
    assert len(jobs.tick(60)) == 1  # 12:02 passed, suspended: no new run


def test_a_run_now_is_labelled_with_its_replica_name_and_a_new_runner_keeps_it(jobs_of: Any) -> None:
    jobs = jobs_of("sleep 60", concurrencyPolicy="Allow")
    gvc = jobs.gvcs["main"]
    run = jobs.run_async(jobs.runner.run_now(jobs.doc, gvc, LOCATION, replica="command-abc"))
    scheduled = jobs.tick(35)[-1]  # the 12:01 fire, named after the run
    labels = {i.labels[JOB_RUN]: i.labels[JOB_REPLICA] for i in jobs.run_async(jobs.engine.list(jobs.world.scope))}
    assert labels == {run.name: "command-abc", scheduled.name: scheduled.name}
    # A new controller process adopts both runs with the replica names their containers carry.
    fresh = CronRunner(jobs.engine, scope=jobs.world.scope, resolve=lambda ref: ref, clock=jobs.clock)
    fresh.last_fire = dict(jobs.runner.last_fire)  # no fire due: only adoption is tested
    jobs.runner = fresh
    adopted = {r.name: r.replica_name for r in jobs.tick()}
    assert adopted == labels


class HeldEngine:
    """The engine, with ``run`` or ``list`` held at an event until the test releases it: to
    interleave a run started by a command with a tick, as the controller's two tasks may."""

    def __init__(self, engine: CliEngine) -> None:
        self.engine = engine
        self.hold: str = ""
        self.entered, self.release = asyncio.Event(), asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    async def _held(self, what: str) -> None:
        if self.hold == what:
            self.hold = ""
            self.entered.set()
            await self.release.wait()

    async def run(self, spec: Any) -> Any:
        info = await self.engine.run(spec)
        await self._held("run")  # the container exists; run_now has not returned yet
        return info

    async def list(self, labels: Any = None) -> Any:
        found = await self.engine.list(labels)
        await self._held("list")  # what was listed; the engine may change before the caller reads it
        return found


@pytest.mark.parametrize("held", ["run", "list"])
def test_a_run_now_beside_a_tick_is_one_run_judged_by_what_was_listed_after_it_started(jobs_of: Any, held: str) -> None:
    """``run``: a tick lists while the command's run is being started (its container made, the
    call not returned): it must not adopt the container as a second run. ``list``: a tick's
    list predates the run's container: it must not fail the run for having none."""
    jobs = jobs_of("sleep 60", concurrencyPolicy="Allow")
    held_engine = HeldEngine(jobs.engine)
    runner = CronRunner(held_engine, scope=jobs.world.scope, resolve=lambda ref: ref, clock=jobs.clock)
    workloads, gvc = {("main", "job"): jobs.doc}, jobs.gvcs["main"]
    runner.last_fire[(jobs.world.org, "main", "job", LOCATION)] = jobs.clock.now  # no fire due

    async def scenario() -> list[JobRun]:
        held_engine.hold = held
        if held == "run":
            started = asyncio.create_task(runner.run_now(jobs.doc, gvc, LOCATION, replica="command-x"))
            await held_engine.entered.wait()
            await runner.tick(workloads, jobs.gvcs)  # lists the new container before run_now returns
            held_engine.release.set()
            await started
        else:
            ticking = asyncio.create_task(runner.tick(workloads, jobs.gvcs))
            await held_engine.entered.wait()  # the tick listed: no container of the run yet
            await runner.run_now(jobs.doc, gvc, LOCATION, replica="command-x")
            held_engine.release.set()
            await ticking
        await runner.tick(workloads, jobs.gvcs)
        return runner.executions().get(f"{jobs.world.org}/main/job", [])

    runs = jobs.run_async(scenario())
    assert [(r.replica_name, r.status, r.message) for r in runs] == [("command-x", "active", "")]
    jobs.runner = runner  # the fixture's clean-up removes its containers
