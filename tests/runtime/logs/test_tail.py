"""Loki's tail over the store (runtime/logs/tailing.py), on real SQLite: the first message holds
the last ``limit`` lines since ``start``, oldest first; later ones each line stored after it
(woken by the collector's signal), including a workload's that did not exist when it started,
never one twice, and only what the query selects."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from plinth.runtime.logs.records import Record
from plinth.runtime.logs.store import LogStore, Position
from plinth.runtime.logs.tailing import Signal, tail
from tests.aio import RunAsync

BASE = 1_800_000_000 * 10**9
ORG = "acme"


def store_lines(store: LogStore, workload: str, lines: list[tuple[int, str]]) -> None:
    labels = {"org": ORG, "gvc": "main", "workload": workload, "container": "main"}
    labels |= {"location": "aws-us-east-2", "provider": "aws", "replica": f"{workload}-0"}
    records = [Record(BASE + ts, "stdout", line) for ts, line in lines]
    store.append(workload, Position("/x", 1, 1), labels, records)


def test_tail_sends_the_recent_lines_then_each_new_one_once(tmp_path: Path, run_async: RunAsync) -> None:
    store = LogStore(tmp_path / "logs.sqlite3")
    signal = Signal()
    store_lines(store, "web", [(i, f"old {i}") for i in range(10)])
    sent: list[dict[str, Any]] = []

    async def until(count: int) -> None:
        while len(sent) < count:
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        params = {"query": '{gvc="main"} != "skip"', "limit": "3", "start": str(BASE + 1)}
        task = asyncio.create_task(tail(store, signal, ORG, params, lambda text: sent.append(json.loads(text))))
        try:
            await asyncio.wait_for(until(1), 30)
            store_lines(store, "web", [(100, "new web"), (101, "skip this")])
            store_lines(store, "api", [(50, "new api")])  # a workload that did not exist before
            store_lines(store, "web", [(0, "too old")])  # before start: not sent
            signal.notify()
            await asyncio.wait_for(until(2), 30)
            signal.notify()  # nothing new: nothing sent
            store_lines(store, "web", [(200, "last")])
            signal.notify()
            await asyncio.wait_for(until(3), 30)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    try:
        run_async(scenario())
    finally:
        store.close()
    lines = [[(s["stream"]["workload"], line) for s in m["streams"] for _, line in s["values"]] for m in sent]
    assert lines[0] == [("web", "old 7"), ("web", "old 8"), ("web", "old 9")]
    assert sorted(lines[1]) == [("api", "new api"), ("web", "new web")]
    assert lines[2:] == [[("web", "last")]]
    assert all(set(m) == {"streams", "dropped_entries"} and m["dropped_entries"] is None for m in sent)
