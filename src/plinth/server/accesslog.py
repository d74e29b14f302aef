"""One structured (JSON) line per request on stderr: method, path, status, duration, request id.

Lines are written in batches (at most :data:`FLUSH_AFTER_S` late, or every :data:`BATCH_LINES`
lines) instead of one write call per request, which on the GET hot path cost as much as the
rest of the logging. A request only appends its fields; they become JSON when the batch is
written, in one tight loop, which under load costs a fraction of formatting each line while
the request is answered. Shutdown flushes what is pending.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

import orjson

BATCH_LINES = 256
FLUSH_AFTER_S = 0.2


class AccessLog:
    def __init__(self, enabled: bool = True, stream: TextIO | None = None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self._pending: list[tuple[str, str, int, float, str]] = []
        self._timer: asyncio.TimerHandle | None = None

    def record(self, method: str, path: str, status: int, duration_s: float, request_id: str) -> None:
        if not self.enabled:
            return
        self._pending.append((method, path, status, duration_s, request_id))
        if len(self._pending) >= BATCH_LINES:
            self.flush()
        elif self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(FLUSH_AFTER_S, self.flush)
            except RuntimeError:  # no loop (a direct call): write at once
                self.flush()

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            entries, self._pending = self._pending, []
            self.stream.write(b"".join(map(_line, entries)).decode())
            self.stream.flush()


def _line(entry: tuple[str, str, int, float, str]) -> bytes:
    method, path, status, duration_s, request_id = entry
    line = {
        "event": "request",
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": round(duration_s * 1000, 3),
        "request_id": request_id,
    }
    return orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
