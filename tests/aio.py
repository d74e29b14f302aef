"""Running async code from plain (synchronous) tests, without an asyncio pytest plugin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar

T = TypeVar("T")


class RunAsync(Protocol):
    """Runs a coroutine to completion on the test's own event loop and returns its result."""

    def __call__(self, awaitable: Awaitable[T], /) -> T: ...


@contextmanager
def event_loop_runner() -> Iterator[RunAsync]:
    """One event loop for the duration of the block: objects bound to a loop (connection
    pools, listeners) can be created by one call and used by the next."""
    loop = asyncio.new_event_loop()
    try:
        yield loop.run_until_complete
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
