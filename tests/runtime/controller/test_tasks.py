"""``cancel_and_wait``: a task that swallowed a cancellation is still stopped."""

from __future__ import annotations

import asyncio

from plinth.runtime.tasks import cancel_and_wait


def test_a_task_that_swallows_the_first_cancellation_is_cancelled_again_until_it_ends() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                swallowed += 1
                if swallowed > 1:  # as asyncio.wait_for on 3.11 may, once
                    raise

    async def main() -> bool:
        task = asyncio.create_task(stubborn())
        await asyncio.sleep(0)
        await cancel_and_wait(task)
        return task.done()

    assert asyncio.run(main()) is True
    assert swallowed == 2


def test_a_task_that_ended_with_an_error_is_waited_for_without_raising() -> None:
    async def failing() -> None:
        raise RuntimeError("boom")

    async def main() -> None:
        task = asyncio.create_task(failing())
        await asyncio.sleep(0)
        await cancel_and_wait(task)
        assert task.done()

    asyncio.run(main())
