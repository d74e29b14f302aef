"""The control loop's leading-edge debounce (``controller/debounce.py``), driven by a clock and a
sleep of the test's own: a pass starts at once on the first wake-up after quiet, wake-ups
within the window coalesce into one next pass at the window's end, and none is lost. Nothing
here waits on real time."""

from __future__ import annotations

import asyncio

import pytest

from plinth.runtime.controller.debounce import LeadingDebounce


class Clock:
    """A clock the test moves; its sleep records the delay and moves the clock by it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []
        self.during_sleep: list[LeadingDebounce] = []  # woken while "asleep"
        self.wakes_left: int | None = None  # how many sleeps wake them (None: every one)

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.wakes_left is not None:
            if self.wakes_left <= 0:
                return
            self.wakes_left -= 1
        for debounce in self.during_sleep:
            debounce.wake()


async def _started(task: asyncio.Task[None]) -> bool:
    for _ in range(5):  # let the task run as far as it can without a wake-up
        await asyncio.sleep(0)
    return task.done()


def test_the_first_wake_up_after_quiet_starts_a_pass_at_once() -> None:
    clock = Clock()

    async def scenario() -> None:
        debounce = LeadingDebounce(0.1, clock=clock, sleep=clock.sleep)
        debounce.wake()
        await debounce.next_pass()
        assert clock.slept == [] and debounce.started == 100.0 and not debounce.pending
        # Quiet for longer than the window: the next wake-up starts one at once too.
        clock.now += 5
        debounce.wake()
        await debounce.next_pass()
        assert clock.slept == [] and debounce.started == 105.0

    asyncio.run(scenario())


def test_wake_ups_within_the_window_coalesce_into_one_pass_at_its_end() -> None:
    clock = Clock()

    async def scenario() -> None:
        debounce = LeadingDebounce(0.1, clock=clock, sleep=clock.sleep)
        debounce.wake()
        await debounce.next_pass()  # the first pass runs from 100.0
        clock.now += 0.03
        for _ in range(3):  # a burst while it runs
            debounce.wake()
        await debounce.next_pass()
        assert clock.slept == [pytest.approx(0.07)]  # the rest of the window, no more
        assert not debounce.pending
        waiting = asyncio.ensure_future(debounce.next_pass())
        assert not await _started(waiting)  # the burst made one pass, not three
        debounce.wake()
        assert await _started(waiting)

    asyncio.run(scenario())


def test_no_wake_up_is_lost_and_one_arriving_during_the_wait_joins_the_pass() -> None:
    clock = Clock()

    async def scenario() -> None:
        debounce = LeadingDebounce(0.1, clock=clock, sleep=clock.sleep)
        debounce.wake()
        await debounce.next_pass()
        debounce.wake()  # during the first pass
        clock.during_sleep.append(debounce)  # and another during the wait for the window's end
        await debounce.next_pass()
        assert len(clock.slept) == 1
        assert not debounce.pending  # the one that came while waiting is in this pass
        clock.during_sleep.clear()
        debounce.wake()  # during the second pass: it asks for a third, none is dropped
        assert debounce.pending
        await debounce.next_pass()
        assert debounce.started == pytest.approx(100.2)

    asyncio.run(scenario())


def test_without_a_wake_up_no_pass_starts() -> None:
    clock = Clock()

    async def scenario() -> None:
        debounce = LeadingDebounce(0.1, clock=clock, sleep=clock.sleep)
        waiting = asyncio.ensure_future(debounce.next_pass())
        assert not await _started(waiting)
        debounce.wake()
        assert await _started(waiting)
        assert clock.slept == []

    asyncio.run(scenario())


def test_after_quiet_the_pass_waits_for_a_burst_to_pause_but_no_longer_than_the_window() -> None:
    """The writes of one apply come milliseconds apart: the first starts the pass once they
    pause for ``settle_s``; a burst that does not pause starts it at the window's end."""
    clock = Clock()

    async def scenario() -> None:
        debounce = LeadingDebounce(0.1, settle_s=0.02, clock=clock, sleep=clock.sleep)
        debounce.wake()
        clock.during_sleep.append(debounce)
        clock.wakes_left = 1  # one more wake-up, during the first settle
        await debounce.next_pass()
        assert clock.slept == [pytest.approx(0.02), pytest.approx(0.02)]  # one more settle, then quiet
        assert not debounce.pending

        clock.now += 10  # quiet again; now a burst that never pauses
        clock.slept.clear()
        clock.wakes_left = None
        debounce.wake()
        await debounce.next_pass()
        assert sum(clock.slept) == pytest.approx(0.1)  # bounded by the window
        assert all(s <= 0.02 + 1e-9 for s in clock.slept)

    asyncio.run(scenario())


def test_a_released_pass_holds_no_window() -> None:
    """The loop releases a pass that did nothing and left its work to the next (the rest of an
    apply came in while it ran): the next starts once the wake-ups pause, not at the window's end."""
    clock = Clock()

    async def scenario() -> None:
        debounce = LeadingDebounce(0.1, settle_s=0.02, clock=clock, sleep=clock.sleep)
        debounce.wake()
        await debounce.next_pass()  # the first pass runs from 100.02
        clock.slept.clear()
        clock.now += 0.03
        debounce.wake()  # while it ran
        debounce.release()
        await debounce.next_pass()
        assert clock.slept == [pytest.approx(0.02)]  # one settle, not the 0.07 left of the window
        assert debounce.started == pytest.approx(100.07)

    asyncio.run(scenario())
