"""Reading a watch stream in tests: a thread reads the NDJSON (or SSE) lines into a queue,
so a test can write meanwhile and then wait, with patience but no timing assertion, for the
events it expects."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import orjson

#: An upper bound on waiting for an event that must come, not a speed requirement.
PATIENCE_S = 30.0
Event = dict[str, Any]


class WatchReader:
    """One open watch. ``status`` is the answer's status; ``events`` arrive in :meth:`next`."""

    def __init__(
        self,
        base_url: str,
        path: str,
        token: str,
        params: dict[str, str] | None = None,
        *,
        sse: bool = False,
        headers: dict[str, str] | None = None,
        method: str = "GET",
        body: Any = None,
        wait_for_room: bool = True,
    ):
        """``wait_for_room``: on a 429 for the per-principal bound on open watches, try again
        after its ``Retry-After`` (as a client does), for up to :data:`PATIENCE_S`: the server
        releases a closed stream only once it notices the disconnect, so a test that opens a
        watch just after closing others may find them still counted. ``False`` for a test of
        the bound itself."""
        self._events: queue.Queue[Event | None] = queue.Queue()
        self.status: int | None = None
        self.error_body: Any = None
        self.sse = sse
        hdrs = {"Authorization": f"Bearer {token}", **(headers or {})}
        if sse:
            hdrs["Accept"] = "text/event-stream"
        self._client = httpx.Client(base_url=base_url, headers=hdrs, timeout=httpx.Timeout(PATIENCE_S, read=None))
        request = self._client.build_request(method, path, params={"watch": "true", **(params or {})}, json=body)
        deadline = time.monotonic() + PATIENCE_S
        while True:
            self._response = self._client.send(request, stream=True)
            self.status = self._response.status_code
            if not (wait_for_room and self.status == 429 and time.monotonic() < deadline):
                break
            retry_after = float(self._response.headers.get("retry-after", "1"))
            self._response.close()
            time.sleep(min(retry_after, 0.2))
        self._thread: threading.Thread | None = None
        self.sse_ids: list[str] = []
        #: What stopped the reading thread other than the stream's end, if anything.
        self.failure: Exception | None = None
        #: How many events have arrived, bookmarks included (for the message of a wait that fails).
        self.received = 0
        if self.status != 200:
            self.error_body = orjson.loads(self._response.read())
            self._response.close()
            return
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            if self.sse:
                for block in self._sse_blocks():
                    self._events.put(block)
            else:
                for line in self._response.iter_lines():
                    if line:
                        self._events.put(orjson.loads(line))
        except (httpx.HTTPError, RuntimeError):
            pass
        except Exception as exc:  # a line that is not JSON: the test says so instead of waiting
            self.failure = exc
        self._events.put(None)

    def _sse_blocks(self) -> Any:
        fields: dict[str, str] = {}
        for line in self._response.iter_lines():
            if line == "":
                if fields:
                    if "id" in fields:
                        self.sse_ids.append(fields["id"])
                    event = orjson.loads(fields["data"])
                    event["_sse"] = fields
                    yield event
                fields = {}
                continue
            name, _, value = line.partition(": ")
            fields[name] = value

    def next(self, timeout: float = PATIENCE_S) -> Event | None:
        """The next event, or ``None`` when the stream has ended."""
        if self._thread is None:
            raise AssertionError(f"the watch was refused: {self.status} {self.error_body}")
        try:
            event = self._events.get(timeout=timeout)
        except queue.Empty as exc:
            alive = self._thread.is_alive()
            raise AssertionError(
                f"no event within {timeout} s (after {self.received} events; reader alive: {alive})"
            ) from exc
        if event is None and self.failure is not None:
            raise AssertionError(f"the stream could not be read: {self.failure!r}") from self.failure
        self.received += event is not None
        return event

    def changes(self, count: int) -> list[Event]:
        """The next ``count`` events other than bookmarks."""
        out: list[Event] = []
        while len(out) < count:
            event = self.next()
            assert event is not None, f"the stream ended after {out}"
            if event["type"] != "BOOKMARK":
                out.append(event)
        return out

    def until(self, predicate: Callable[[Event], bool]) -> list[Event]:
        """Every event up to and including the first ``predicate`` accepts."""
        seen: list[Event] = []
        while True:
            event = self.next()
            assert event is not None, f"the stream ended before the event looked for; saw {seen}"
            seen.append(event)
            if predicate(event):
                return seen

    def rest(self) -> list[Event]:
        """Every event until the stream ends."""
        out: list[Event] = []
        while (event := self.next()) is not None:
            out.append(event)
        return out

    def close(self) -> None:
        self._response.close()
        self._client.close()

    def __enter__(self) -> WatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def named(events: list[Event]) -> list[tuple[str, str]]:
    """``(type, name)`` of each change event."""
    return [(e["type"], e["object"]["name"]) for e in events if e["type"] != "BOOKMARK"]
