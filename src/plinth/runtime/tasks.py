"""Stopping the runtime's tasks (the controller's, the log collector's, the data plane's) for certain."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` until it has ended. Once is not always enough: a coroutine that was
    finishing as the cancellation arrived may swallow it (``asyncio.wait_for`` on Python 3.11
    does), and a loop that swallowed it would run on, unseen, after its controller stopped."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()
