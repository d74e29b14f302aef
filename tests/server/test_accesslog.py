"""The access log batches its lines but loses none; request ids are unique and UUID-shaped."""

from __future__ import annotations

import asyncio
import io
import json
import re

from plinth.server.accesslog import BATCH_LINES, AccessLog
from plinth.server.http import next_request_id


def test_lines_wait_for_the_timer_then_all_appear_in_order() -> None:
    stream = io.StringIO()
    log = AccessLog(stream=stream)

    async def scenario() -> str:
        for i in range(3):
            log.record("GET", f"/org/a/gvc/g{i}", 200, 0.001, f"id-{i}")
        before = stream.getvalue()
        await asyncio.sleep(0.5)
        assert before == ""
        return stream.getvalue()

    lines = [json.loads(line) for line in asyncio.run(scenario()).splitlines()]
    assert [entry["request_id"] for entry in lines] == ["id-0", "id-1", "id-2"]
    assert lines[0] == {
        "event": "request", "method": "GET", "path": "/org/a/gvc/g0", "status": 200,
        "duration_ms": 1.0, "request_id": "id-0",
    }  # fmt: skip


def test_a_full_batch_is_written_at_once_and_flush_writes_the_rest() -> None:
    stream = io.StringIO()
    log = AccessLog(stream=stream)

    async def scenario() -> None:
        for i in range(BATCH_LINES + 5):
            log.record("POST", "/org/a/gvc", 201, 0.0, str(i))
        assert len(stream.getvalue().splitlines()) == BATCH_LINES
        log.flush()

    asyncio.run(scenario())
    assert [json.loads(line)["request_id"] for line in stream.getvalue().splitlines()] == [
        str(i) for i in range(BATCH_LINES + 5)
    ]


def test_request_ids_are_unique_and_uuid_shaped() -> None:
    ids = [next_request_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", i) for i in ids)
