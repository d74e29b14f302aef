"""The engine's own record of what it did and when: ``podman events`` read in a thread.

Each event carries the engine's time stamp (nanoseconds, wall clock) and the container's labels,
so the delay from a write to the engine acting on it is the event's time minus the time the
write was sent, both on this machine's wall clock, with no polling interval in between.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import datetime

#: ``2026-11-27T07:14:28.205226525Z``: podman prints nanoseconds, which ``fromisoformat`` refuses.
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def event_time(stamp: str) -> float:
    """Seconds since the epoch of a podman event's ``Time``."""
    found = _STAMP.match(stamp)
    if found is None:
        raise ValueError(f"unexpected podman event time: {stamp!r}")
    whole, fraction, zone = found.groups()
    zone = "+00:00" if zone == "Z" else zone
    base = datetime.fromisoformat(whole + zone).timestamp()
    return base + (float("0." + fraction) if fraction else 0.0)


@dataclass(frozen=True)
class Event:
    status: str  # create, init, start, stop, died, remove, ...
    name: str
    at: float  # epoch seconds, the engine's stamp
    labels: dict[str, str]


class EventWatch:
    """``podman events`` for the containers carrying ``label`` (``key=value``), kept in a list."""

    def __init__(self, label: str) -> None:
        argv = ["podman", "events", "--format", "json", "--filter", f"label={label}", "--filter", "type=container"]
        self._process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                doc = json.loads(line)
                event = Event(doc["Status"], doc["Name"], event_time(doc["Time"]), doc.get("Attributes") or {})
            except (ValueError, KeyError):
                continue
            with self._lock:
                self._events.append(event)
                self._last = time.monotonic()

    def quiet_for(self) -> float:
        """Seconds since the last event arrived (or since the watch began)."""
        with self._lock:
            return time.monotonic() - self._last

    def first(self, status: str, labels: dict[str, str], after: float, timeout_s: float) -> Event:
        """The first ``status`` event at or after ``after`` of a container carrying ``labels``;
        raises ``TimeoutError`` saying what was awaited when none comes within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                for event in self._events:
                    if event.status == status and event.at >= after and labels.items() <= event.labels.items():
                        return event
            if time.monotonic() > deadline:
                raise TimeoutError(f"no podman '{status}' event for {labels} within {timeout_s:g} s")
            time.sleep(0.01)

    def close(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
