"""Starting an engine CLI process so that a cancellation never leaves it unwatched.

A task cancelled while ``asyncio.create_subprocess_exec`` is starting a process loses the process
it started: nothing kills or reaps it, and its transport, collected after the event loop closed,
fails there ("Event loop is closed"). :func:`start` lets the start finish, then kills and reaps
the process before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def start(binary: str, *args: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec(binary, *args, **kwargs)``, safe to cancel (module docstring)."""
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(binary, *args, **kwargs))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await starting
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
        raise
