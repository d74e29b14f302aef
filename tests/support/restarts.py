"""Clients that keep working while servers restart: round-robin over replicas, retrying only what
is safe to retry, and keeping the books the restart tests check.

- **Reads** (GET) are retried on any failure to get an answer: a refused or reset connection, a
  503. They change nothing, so a repeat is harmless.
- **Writes** are version-pinned PATCHes (``"version": n`` in the body: 409 unless the item is
  still at ``n``), one writer per item. A write whose answer never came may or may not have been
  applied; sending it again is safe, since it can apply at most once: a repeat of one that did
  apply gets 409, and then a read tells whether the item holds this write (acknowledged late)
  or not (a lost write: counted, and the test fails).
- Anything else (a 5xx other than 503, a 4xx other than that 409) is *unexpected*, and so is a
  request that no attempt answered before the deadline.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

#: Seconds between two attempts of one request; and how long a request may go unanswered.
RETRY_PAUSE_S = 0.02
ANSWER_DEADLINE_S = 60.0


@dataclass
class Books:
    """What the clients saw, shared by every client thread."""

    acked: dict[str, tuple[int, str]] = field(default_factory=dict)  # item -> last (version, description)
    writes: int = 0
    reads: int = 0
    retried_503: int = 0
    retried_unanswered: int = 0
    refused: int = 0
    late_acks: int = 0
    unexpected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, **counts: int) -> None:
        with self.lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)

    def summary(self) -> str:
        return (
            f"{self.writes} writes acknowledged ({self.late_acks} after a retry), {self.reads} reads; retried: "
            f"{self.refused} refused, {self.retried_unanswered} unanswered, {self.retried_503} answered 503"
        )

    def wrong(self, what: str) -> None:
        with self.lock:
            self.unexpected.append(what)


class RoundRobin:
    """One keep-alive client per replica; each attempt goes to the next replica."""

    def __init__(self, urls: Callable[[], list[str]], key: str):
        self._urls = urls
        self._clients: dict[str, httpx.Client] = {}
        self._key = key
        self._turn = itertools.count()

    def client(self) -> httpx.Client:
        urls = self._urls()
        url = urls[next(self._turn) % len(urls)]
        if url not in self._clients:
            self._clients[url] = httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {self._key}"}, timeout=30
            )
        return self._clients[url]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()


def answered(rr: RoundRobin, books: Books, method: str, path: str, body: Any = None) -> httpx.Response:
    """The first answer other than a 503, retrying refused, reset and unanswered attempts."""
    deadline = time.monotonic() + ANSWER_DEADLINE_S
    while True:
        try:
            reply = rr.client().request(method, path, json=body)
        except httpx.ConnectError:
            books.note(refused=1)  # never sent: always safe to send again
        except httpx.TransportError:
            books.note(retried_unanswered=1)  # sent, no answer: the callers only send what may be repeated
        else:
            if reply.status_code != 503:
                return reply
            books.note(retried_503=1)
        if time.monotonic() > deadline:
            raise TimeoutError(f"{method} {path} was not answered within {ANSWER_DEADLINE_S:g} s")
        time.sleep(RETRY_PAUSE_S)


class Clients:
    """``writers`` threads, each PATCHing its own item with pinned versions, and ``readers``
    threads reading them, until :meth:`stop`."""

    def __init__(self, urls: Callable[[], list[str]], key: str, items: list[str], readers: int):
        self.books = Books()
        self._urls, self._key, self._items = urls, key, items
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._write, args=(item,)) for item in items]
        self._threads += [threading.Thread(target=self._read, args=(r,)) for r in range(readers)]

    def start(self) -> Clients:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> Books:
        self._stop.set()
        for thread in self._threads:
            thread.join(ANSWER_DEADLINE_S * 2)
        return self.books

    def writes(self) -> int:
        with self.books.lock:
            return self.books.writes

    def _guarded(self, work: Callable[[RoundRobin], None]) -> None:
        rr = RoundRobin(self._urls, self._key)
        try:
            while not self._stop.is_set():
                work(rr)
        except Exception as exc:  # an unanswered request, or a bug in the test: fail it
            self.books.wrong(f"client thread stopped: {exc!r}")
        finally:
            rr.close()

    def _read(self, reader: int) -> None:
        turn = itertools.count(reader)

        def one(rr: RoundRobin) -> None:
            item = self._items[next(turn) % len(self._items)]
            reply = answered(rr, self.books, "GET", item)
            if reply.status_code != 200:
                self.books.wrong(f"GET {item}: {reply.status_code} {reply.text[:200]}")
            self.books.note(reads=1)

        self._guarded(one)

    def _write(self, item: str) -> None:
        state: dict[str, Any] = {"n": 0, "version": None}

        def one(rr: RoundRobin) -> None:
            if state["version"] is None:
                state["version"] = answered(rr, self.books, "GET", item).json()["version"]
            state["n"] += 1
            description = f"write {state['n']}"
            reply = answered(rr, self.books, "PATCH", item, {"version": state["version"], "description": description})
            if reply.status_code == 409:
                # Stale: an earlier attempt of this very write was applied, unanswered (or else
                # another writer wrote, which this test never does): read which.
                stored = self._read_past(rr, item, state["version"])
                if stored["description"] != description or stored["version"] != state["version"] + 1:
                    self.books.wrong(f"PATCH {item} #{state['n']}: 409, and the item does not hold it: {stored}")
                    return
                self.books.note(late_acks=1)
                version = stored["version"]
            elif reply.status_code == 200:
                version = reply.json()["version"]
            else:
                self.books.wrong(f"PATCH {item} #{state['n']}: {reply.status_code} {reply.text[:200]}")
                return
            state["version"] = version
            with self.books.lock:
                self.books.acked[item] = (version, description)
                self.books.writes += 1

        self._guarded(one)

    def _read_past(self, rr: RoundRobin, item: str, version: int) -> dict[str, Any]:
        """The item as stored, once a replica shows it at a version other than ``version``,
        which the database has just refused as stale: a replica other than the writer's may
        show the previous version until the write's notification reaches it (docs/api.md,
        "Durability and availability")."""
        deadline = time.monotonic() + ANSWER_DEADLINE_S
        while True:
            stored: dict[str, Any] = answered(rr, self.books, "GET", item).json()
            if stored["version"] != version or time.monotonic() > deadline:
                return stored
            time.sleep(RETRY_PAUSE_S)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)


def check_nothing_lost(books: Books, read: Callable[[str], dict[str, Any]]) -> None:
    """Every item holds its last acknowledged write, as acknowledged. ``read`` reads what is
    stored: through the API of a server that alone writes the store, or the store itself."""
    for item, (version, description) in books.acked.items():
        stored = read(item)
        assert (stored["version"], stored["description"]) == (version, description), item
