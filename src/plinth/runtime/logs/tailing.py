"""Loki's ``tail``: the lines of a query as they are collected, sent as Loki tail messages.

A tail first sends the last ``limit`` lines since ``start`` (oldest first, as Loki's first
tail message), then, each time the collector stored lines (:class:`Signal`: no polling), the
new ones that match, in the order they were collected, until it is cancelled. Each message is
``{"streams": [{"stream": {labels}, "values": [["<ns>", "line"], ...]}], "dropped_entries":
null}``; nothing is dropped here (a slow client slows its own tail only: it reads the store at
its own pace).

A tail follows the store's line ids, not times: the lines it sends after its first message are
exactly those stored after that message's query, whatever their times.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from plinth.runtime.logs.params import parse_params
from plinth.runtime.logs.query import as_streams, matching_streams, select
from plinth.runtime.logs.store import LogStore

#: Lines read from the store at a time while following.
FOLLOW_BATCH = 1000

Send = Callable[[str], Awaitable[Any] | Any]


class Signal:
    """Tells waiters that lines were stored: :meth:`current` before looking at the store, then
    ``await event.wait()`` when there was nothing new (a notify in between is not missed)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def current(self) -> asyncio.Event:
        return self._event

    def notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()


def message(streams: list[dict[str, Any]]) -> str:
    return json.dumps({"streams": streams, "dropped_entries": None}, separators=(",", ":"))


async def _send(send: Send, text: str) -> None:
    result = send(text)
    if inspect.isawaitable(result):
        await result


async def tail(store: LogStore, signal: Signal, org: str, params: Mapping[str, str], send: Send) -> None:
    """Send ``org``'s lines matching ``params`` (Loki's tail parameters: ``query``, ``limit``,
    ``start``; ``delay_for`` ignored) until cancelled. A bad parameter raises
    :class:`~.params.ParamError` before anything is sent."""
    checked = parse_params(params, tail=True)
    event = signal.current()
    last = await asyncio.to_thread(store.last_id)
    first = replace(checked, backward=True)
    streams = await asyncio.to_thread(matching_streams, store, org, checked.query)
    rows = await asyncio.to_thread(select, store, streams, first, last)
    if rows:
        await _send(send, message(as_streams(rows[::-1], streams)))
    keep = checked.query.line_test()
    while True:
        await event.wait()
        event = signal.current()
        while batch := await asyncio.to_thread(store.after, org, last, FOLLOW_BATCH):
            last = batch[-1][0]
            # Streams read after the lines: a line's stream was stored before it (one transaction),
            # so a stream new since the last look is known here and none of its lines is missed.
            streams = await asyncio.to_thread(matching_streams, store, org, checked.query)
            rows = [r for r in batch if r[2] in streams and r[1] >= checked.start and (keep is None or keep(r[3]))]
            if rows:
                await _send(send, message(as_streams(rows, streams)))
