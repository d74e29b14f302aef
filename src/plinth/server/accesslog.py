"""One structured (JSON) line per request on stderr: method, path, status, duration, request id."""

from __future__ import annotations

import sys
from typing import TextIO

import orjson


class AccessLog:
    def __init__(self, enabled: bool = True, stream: TextIO | None = None):
        self.enabled = enabled
        self.stream = stream or sys.stderr

    def record(self, method: str, path: str, status: int, duration_s: float, request_id: str) -> None:
        if not self.enabled:
            return
        line = orjson.dumps(
            {
                "event": "request",
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(duration_s * 1000, 3),
                "request_id": request_id,
            }
        )
        self.stream.write(line.decode() + "\n")
