"""Whether a server keeps answering others while a hostile request is being served.

A thread sends the hostile request a few times, one after another; meanwhile the test sends
ordinary requests (``/healthz`` and a list) and counts those answered 200. A server whose worker
is stuck on the hostile request answers none of them until it is done, so an ordinary request
then runs out of its (generous) patience. Nothing here measures how long the hostile request
takes: only that the others are served while it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from tests.support.server import ServerProcess

#: How long an ordinary request may wait for its answer: far above what one takes on a loaded
#: test machine, far below how long a request doing quadratic or exponential work holds a worker.
PATIENCE_S = 15.0
#: How often the hostile request is sent (one after another), and the fewest ordinary requests
#: that must be answered meanwhile.
HOSTILE_ROUNDS = 3
ORDINARY_MIN = 10
#: A bound on the ordinary requests sent while the hostile ones run (the loop always ends).
ORDINARY_MAX = 10_000


@dataclass
class Outcome:
    hostile: list[httpx.Response] = field(default_factory=list)
    answered: int = 0
    failures: list[str] = field(default_factory=list)


def while_hostile(server: ServerProcess, hostile: Callable[[], httpx.Response], ordinary_path: str) -> Outcome:
    """Send ``hostile`` :data:`HOSTILE_ROUNDS` times from a thread while sending ordinary requests
    (``/healthz`` and ``ordinary_path`` as the admin), until the hostile thread is done and at
    least :data:`ORDINARY_MIN` ordinary requests were sent."""
    outcome = Outcome()
    started = threading.Event()

    def attack() -> None:
        for _ in range(HOSTILE_ROUNDS):
            started.set()
            try:
                outcome.hostile.append(hostile())
            except httpx.HTTPError as exc:  # no answer in the client's patience: recorded, not raised
                outcome.failures.append(f"hostile request: {exc!r}")
                return

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    started.wait(PATIENCE_S)
    with server.client() as client:
        client.timeout = httpx.Timeout(PATIENCE_S)
        sent = 0
        while sent < ORDINARY_MAX and (thread.is_alive() or sent < ORDINARY_MIN):
            path = "/healthz" if sent % 2 == 0 else ordinary_path
            sent += 1
            try:
                r = client.get(path)
            except httpx.TimeoutException:
                outcome.failures.append(f"GET {path}: no answer within {PATIENCE_S} s")
                break
            if r.status_code == 200:
                outcome.answered += 1
            else:
                outcome.failures.append(f"GET {path}: {r.status_code} {r.text[:200]}")
    return outcome


def assert_kept_answering(outcome: Outcome, hostile_status: int) -> list[httpx.Response]:
    """Every ordinary request was answered 200, and every hostile one with ``hostile_status``."""
    assert not outcome.failures, outcome.failures
    assert outcome.answered >= ORDINARY_MIN
    assert len(outcome.hostile) == HOSTILE_ROUNDS
    for r in outcome.hostile:
        assert r.status_code == hostile_status, r.text[:500]
    return outcome.hostile
