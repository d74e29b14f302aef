"""When the prober lists the engine (``controller/prober.py``): on the engine's events, against
real podman. The pure rules first (the test's own clock), then the event stream: a container
started in scope makes a list due, an exec (an exec probe's) does not."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from plinth.runtime.containers import CliEngine, ContainerInfo
from plinth.runtime.controller.prober import EngineWatch
from tests.aio import RunAsync
from tests.runtime.controller.conftest import READY_WAIT_S, World

#: How many times the exec is tried when a late event of the container's start came with it.
EXEC_TRIES = 5
#: Idles until stopped, ending at once on SIGTERM.
IDLE = "trap 'exit 0' TERM; sleep 300 & wait"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Listing:
    """A driver that lists nothing and has no event stream (as a test's wrapper may not)."""

    async def list(self, labels: Mapping[str, str] | None = None) -> list[ContainerInfo]:
        return []


def test_a_list_is_due_when_stale_untrusted_old_or_after_the_controllers_own_actions(run_async: RunAsync) -> None:
    clock = Clock()
    watch = EngineWatch(Listing(), {}, relist_s=10, warmup_s=1, clock=clock)  # type: ignore[arg-type]
    assert watch.list_due(0)  # never listed
    run_async(watch.list(0))
    assert watch.list_due(0)  # no stream: every round lists
    watch.trusted_from = clock.now + 1  # a stream that has just started
    assert watch.list_due(0)
    clock.now += 1
    assert not watch.list_due(0) and watch.unchanged(0)
    assert watch.list_due(1) and not watch.unchanged(1)  # a pass (or a cron action) since the list
    watch.stale = True  # an event that changes what runs
    assert watch.list_due(0) and not watch.unchanged(0)
    run_async(watch.list(0))
    clock.now += 10
    assert watch.list_due(0) and watch.unchanged(0)  # the safety net: listed, but long ago
    untrusted = EngineWatch(Listing(), {}, clock=clock)  # type: ignore[arg-type]
    run_async(untrusted.follow())  # a driver without events: it returns, and every round lists
    assert untrusted.trusted_from is None and untrusted.list_due()


def test_the_engines_events_make_a_list_due_and_exec_ones_do_not(
    world: World, engine: CliEngine, run_async: RunAsync
) -> None:
    planned = world.desired(world.workload("watched"))[0]
    # Off the GVC network: run directly (no reconcile pass makes the network), the container
    # must not depend on one another test made.
    spec = replace(planned, name=f"{planned.name}_w", command="/bin/sh", args=["-c", IDLE], network=None, aliases=())

    async def scenario() -> None:
        changes: list[int] = []  # each event that made the list stale, as the watch reports it
        watch = EngineWatch(engine, dict(world.scope), relist_s=3600, warmup_s=0.5, on_change=lambda: changes.append(1))
        follower = asyncio.create_task(watch.follow())
        try:
            await _until(lambda: watch.trusted_from is not None and time.monotonic() >= watch.trusted_from, "trust")
            # The stream replays nothing from before it reads: start containers until it tells.
            deadline = time.monotonic() + READY_WAIT_S
            await watch.list()
            while not watch.stale:
                assert time.monotonic() < deadline, "no event of a container started in scope"
                await engine.remove(spec.name)
                await engine.run(spec)
                await asyncio.sleep(0.5)
            assert watch.list_due()
            # Quiet once listed after the last event (a start has a few: create, init, start).
            # Under load an event of the starts above can come later than the quiet spell: an
            # exec that such an event followed proves nothing, so it is tried again (a few
            # times); exec events that made the list stale would do so every time.
            for _ in range(EXEC_TRIES):
                await _settle(watch)
                assert [i.name for i in await watch.list()] == [spec.name]
                before, changed = watch.events, len(changes)
                assert (await engine.exec(spec.name, ["true"])).exit_code == 0
                await _until(lambda seen=before: watch.events > seen, "the exec's events")
                await asyncio.sleep(0.5)  # the exec's last events (podman: exec, then exec_died)
                if len(changes) == changed:
                    break
            assert not watch.stale and not watch.list_due()
            await engine.stop(spec.name, 5)
            await _until(lambda: watch.stale, "the stop's events")
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
            await engine.remove(spec.name)

    run_async(scenario())


async def _until(check: Any, what: str) -> None:
    deadline = time.monotonic() + READY_WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"waited {READY_WAIT_S} s for {what}"
        await asyncio.sleep(0.05)


async def _settle(watch: EngineWatch) -> None:
    """List until no event came in since the list (bounded)."""
    deadline = time.monotonic() + READY_WAIT_S
    await watch.list()
    for _ in range(100):
        await asyncio.sleep(0.5)
        if not watch.stale:
            return
        assert time.monotonic() < deadline, "events kept coming"
        await watch.list()
