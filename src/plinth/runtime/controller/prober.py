"""The control loop's prober, and when it lists the engine: on the engine's events, not every
second.

:func:`probe_forever` (what :meth:`~.loop.ControlLoop.probe_forever` runs beside the passes) goes
round about every second, sooner when a probe is due, and at once when a pass changed
containers or the engine's events say something changed (``loop.probe_soon``): it runs the due
readiness and liveness probes (:meth:`~.supervisor.Supervisor.probe`) and ticks the cron jobs.
What it found decides what follows:

- a replica container ended or is gone, or a back-off is over: the loop is woken, for a pass
  (it starts the replica again, or reports the suspend that removed it);
- otherwise, a readiness verdict changed or a container appeared: there is nothing to
  reconcile, so only those workloads are reported, at once
  (:meth:`~.loop.ControlLoop.report_observed`), not on the pass after.

Each round works on the scope's containers as last listed. :class:`EngineWatch` decides when to
list them again (one engine ``list``), which is only when something may have changed:

- **the engine said so**: it follows the driver's event stream (``podman events``) for the scope,
  and an event that changes what runs (:data:`CHANGES`: created, started, died, removed, ...)
  makes the last list stale; ``exec`` events (exec probes) do not;
- **the controller acted**: a pass of the loop, or a cron action, since the last list (their
  counters moved), so a round never works on a list from before them, whichever comes first of
  the action's end and its events;
- **the stream cannot be trusted**: while it is not running, and for :data:`WARMUP_S` after it
  starts (what happened before the engine's command was reading is not replayed), every round
  lists, as if there were no stream;
- **the safety net**: at least every :data:`RELIST_S` whatever the stream says.

A list that is due waits while a pass runs, for up to :data:`PASS_DEFER_S` of it: the pass's
own engine commands (a stack's replicas starting) would contend with it for the engine's lock,
and the pass's end starts a round, which lists. Meanwhile the cron runner's tick works on the
last list too, rather than listing for itself, unless the runner acted since that list. A
longer pass (a rollout waiting for readiness) does not hold the prober's lists back beyond that.

Between lists, probes run against the containers of the last list (their ids and ports): a
container that changed since has an event, and the round after it lists again. A container a
pass started after that list is not in it, but is not gone either: the supervisor keeps
watching it (the round passes when its list was asked for), so the gateway's loads during and
after the pass still count it ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from plinth.runtime.containers.protocol import ContainerEngine, ContainerInfo
from plinth.runtime.controller.reconcile import slot_of
from plinth.runtime.tasks import cancel_and_wait

if TYPE_CHECKING:
    from plinth.runtime.controller.loop import ControlLoop

log = logging.getLogger(__name__)

#: Event actions that change what runs (podman's words and docker's): a list is due.
CHANGES = frozenset(
    {"create", "start", "died", "die", "stop", "kill", "remove", "destroy", "pause", "unpause", "restart", "rename"}
)
#: How long after the event stream starts it is trusted (it replays nothing from before).
WARMUP_S = 1.0
#: The longest the prober goes without listing, whatever the events say.
RELIST_S = 10.0
#: A round does not list while a pass that started less than this long ago runs (it probes
#: the containers of the last list): the pass's end asks for a round, which lists.
PASS_DEFER_S = 2.0
#: Back-off between restarts of an event stream that ended.
RESTART_MIN_S, RESTART_MAX_S = 1.0, 30.0


class EngineWatch:
    """Follows the engine's events for ``scope`` and says when a list is due (module docstring)."""

    def __init__(
        self,
        driver: ContainerEngine,
        scope: dict[str, str],
        *,
        relist_s: float = RELIST_S,
        warmup_s: float = WARMUP_S,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.driver, self.scope = driver, scope
        #: Called on each event that makes the last list stale (the prober's next round now).
        self.on_change = on_change
        self.relist_s, self.warmup_s, self.clock = relist_s, warmup_s, clock
        #: When the stream became trustworthy (clock time), ``None`` while it is not running.
        self.trusted_from: float | None = None
        self.stale = True
        self._listed_at = -float("inf")
        self._marks: tuple[int, ...] = ()
        #: Lists made, and events seen (for tests and the bench).
        self.lists = self.events = 0

    def list_due(self, *marks: int) -> bool:
        """Whether the next round must list: stale, untrusted stream, safety net, or one of
        ``marks`` (counters of the controller's own actions) moved since the last list."""
        now = self.clock()
        return (
            self.stale
            or self.trusted_from is None
            or now < self.trusted_from
            or now - self._listed_at >= self.relist_s
            or marks != self._marks
        )

    def unchanged(self, *marks: int) -> bool:
        """Whether nothing is known to have changed since the last list: no event that changes
        what runs, and ``marks`` as they were."""
        return not self.stale and marks == self._marks

    def kept(self, index: int, mark: int) -> bool:
        """Whether the ``index``-th of the marks is what it was at the last list (events aside)."""
        return index < len(self._marks) and self._marks[index] == mark

    async def list(self, *marks: int) -> list[ContainerInfo]:
        """List the scope now. Marked fresh *before* the call: an event arriving during it makes
        the next round list again."""
        self.stale, self._listed_at, self._marks = False, self.clock(), marks
        self.lists += 1
        try:
            return await self.driver.list(self.scope)
        except BaseException:
            self.stale = True
            raise

    async def follow(self) -> None:
        """Follow the event stream until cancelled, starting it again after a back-off when it
        ends. A driver without one (a test's wrapper) leaves the watch listing every round."""
        if not hasattr(self.driver, "events"):
            return
        pause = RESTART_MIN_S
        while True:
            self.trusted_from = self.clock() + self.warmup_s
            try:
                async for event in self.driver.events(self.scope):
                    self.events += 1
                    if event.action in CHANGES:
                        self.stale = True
                        if self.on_change is not None:
                            self.on_change()
                    pause = RESTART_MIN_S  # it ran: a later end starts again soon
                log.warning("the engine's event stream ended; listing every round until it runs again")
            except Exception as exc:
                log.warning("the engine's event stream failed (%s); listing every round until it runs again", exc)
            self.trusted_from, self.stale = None, True
            await asyncio.sleep(pause)
            pause = min(RESTART_MAX_S, pause * 2)


async def probe_forever(loop: ControlLoop, tick_s: float) -> None:
    """The prober of ``loop`` (module docstring), rounds at most ``tick_s`` apart."""
    aio = asyncio.get_running_loop()
    supervisor = loop.supervisor
    watch = EngineWatch(loop.driver, loop.scope, on_change=loop.engine_changed)
    follower = asyncio.create_task(watch.follow())
    restart_wake: asyncio.TimerHandle | None = None
    infos: list[ContainerInfo] = []
    listed_at = supervisor.clock()  # when ``infos`` was asked for, on the supervisor's clock
    listed: set[tuple[str, bool]] = set()
    try:
        while True:
            loop.probe_soon.clear()  # what asks for a round from now on gets one more
            try:
                young = _pass_young(loop)
                if watch.list_due(loop.passes, loop.cron.changes) and not young:
                    asked = supervisor.clock()
                    infos = await watch.list(loop.passes, loop.cron.changes)
                    listed_at = asked
                ended = any(not info.running and slot_of(info.labels) for info in infos)
                now_listed = {(info.name, info.running) for info in infos if slot_of(info.labels)}
                # A replica container gone since the last list wakes the loop too: one taken
                # while a pass was removing containers (a suspend) must not stay the last word.
                gone = {name for name, _ in listed} - {name for name, _ in now_listed}
                appeared = {name for name, _ in now_listed - listed}
                listed = now_listed
                assert supervisor.probes_for is not None
                # The list may be older than a pass's new containers: their watches stay.
                verdicts = await supervisor.probe(loop.driver, infos, supervisor.probes_for, listed_at)
                if ended or gone:
                    loop.wake()  # a replica ended: the next pass restarts it (and reports)
                elif verdicts or appeared:
                    loop.report_observed(_workloads(infos, appeared, supervisor.changed))
            except Exception:
                log.exception("org %s: probing failed; trying again", loop.org)
            restart = supervisor.next_restart()
            if restart_wake is not None:
                restart_wake.cancel()
            if restart is not None:
                restart_wake = aio.call_later(max(0.0, restart - supervisor.clock()), loop.wake)
            try:
                # The last list, unless something changed since: then the cron runner lists. During
                # a young pass it gets the last list as long as it did nothing itself since (the
                # round after the pass lists): a list from before its own action would mislead it.
                kept = young and watch.kept(1, loop.cron.changes)
                current = infos if kept or watch.unchanged(loop.passes, loop.cron.changes) else None
                before = loop.job_states()
                await loop.cron.tick(loop.informer.workloads, loop.informer.gvcs, current)
                if loop.job_states() != before:
                    loop.wake()  # a run started or ended: the reporter shows it in jobExecutions
            except Exception:
                log.exception("org %s: running cron jobs failed; trying again", loop.org)
            due = supervisor.next_probe()
            pause = tick_s if due is None else min(tick_s, max(0.05, due - supervisor.clock()))
            with contextlib.suppress(TimeoutError):  # the tick (or a due probe) came first
                async with asyncio.timeout(pause):  # not wait_for: it can swallow a cancellation
                    await loop.probe_soon.wait()
    finally:
        if restart_wake is not None:
            restart_wake.cancel()
        await cancel_and_wait(follower)


def _pass_young(loop: ControlLoop) -> bool:
    """Whether a pass runs that started less than :data:`PASS_DEFER_S` ago: the round does
    not list then (module docstring)."""
    started = loop.pass_started
    return started is not None and time.monotonic() - started < PASS_DEFER_S


def _workloads(infos: list[ContainerInfo], appeared: set[str], changed: set[str]) -> set[str]:
    """``gvc/name`` of the workloads whose containers ``appeared`` (by name) or whose verdicts
    ``changed`` (``org/gvc/workload``): what a report between passes covers."""
    keys = {key.split("/", 1)[1] for key in changed}
    for info in infos:
        slot = slot_of(info.labels)
        if slot is not None and info.name in appeared:
            keys.add(f"{slot[1]}/{slot[2]}")
    return keys
