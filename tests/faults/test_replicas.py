"""Three ``plinth serve`` replicas on one PostgreSQL database, one of them killed mid-load.

Writers spread over the replicas read a shared GVC through one replica and PATCH it through
another with the version they read, as the official CLI does. Every answer is kept:

- no update is lost: two successes never start from the same version, and the record's event
  log holds one update for each success (at the version and time the success answered), plus at
  most the writes whose answer the kill swallowed;
- every 409 is a real conflict: the event that moved the record past the version the writer
  read was committed before the 409 was answered;
- the replicas left standing go on serving: no 5xx from them, and successes through both
  after the kill;
- caches agree within a second: after the kill, a policy granted and a key revoked through
  one survivor hold on the other within one second, while the writers keep writing.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.faults.store_check import check_documents_match_their_rows, check_history, read_postgres
from tests.support.server import ServerProcess, start_server

pytestmark = pytest.mark.postgres

WRITERS = 8
RECORDS = [f"hot-{i}" for i in range(3)]
LOAD_BEFORE_KILL_S = 2.5
LOAD_AFTER_KILL_S = 2.0
CACHE_BOUND_S = 1.0


@dataclass
class Outcome:
    writer: int
    seq: int
    name: str
    read_version: int
    status: int | None  # None: no answer (the replica died under the request)
    replica: int
    answered: datetime
    version: int | None = None  # the version a success answered
    modified: str | None = None  # ... and its lastModified


@dataclass
class Book:
    outcomes: list[Outcome] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def replicas(tmp_path: Path, fresh_pg_url: str) -> Iterator[list[ServerProcess]]:
    first = start_server(tmp_path / "a", fresh_pg_url)  # bootstraps the store
    with ThreadPoolExecutor(2) as pool:
        others = list(pool.map(lambda d: start_server(tmp_path / d, fresh_pg_url), ["b", "c"]))
    servers = [first, *others]
    for server in others:
        server.key = first.key  # the store's admin key, minted once by the first replica
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


def _writer(
    index: int, servers: list[ServerProcess], alive: dict[str, tuple[int, ...]], book: Book, stop: threading.Event
) -> None:
    rng = random.Random(index)
    clients = [s.client() for s in servers]
    seq = 0
    try:
        while not stop.is_set():
            seq += 1
            name = rng.choice(RECORDS)
            serving = alive["now"]
            reader, writer = rng.choice(serving), rng.choice(serving)
            try:
                read = clients[reader].get(f"/org/acme/gvc/{name}")
            except httpx.TransportError:
                continue
            if read.status_code != 200:
                book.unexpected.append(f"GET via {reader}: {read.status_code} {read.text}")
                continue
            version = read.json()["version"]
            body = {"version": version, "tags": {f"w{index}": seq}}
            try:
                response: httpx.Response | None = clients[writer].patch(f"/org/acme/gvc/{name}", json=body)
            except httpx.TransportError:
                response = None
            outcome = Outcome(index, seq, name, version, None, writer, datetime.now(UTC))
            if response is not None:
                outcome.status = response.status_code
                if response.status_code == 200:
                    doc = response.json()
                    outcome.version, outcome.modified = doc["version"], doc["lastModified"]
                elif response.status_code != 409:
                    book.unexpected.append(f"PATCH via {writer}: {response.status_code} {response.text}")
            with book.lock:
                book.outcomes.append(outcome)
    finally:
        for client in clients:
            client.close()


def _until(check: Callable[[], bool], bound: float) -> float:
    """Poll ``check()`` until true; return how long that took (failing past ``bound``)."""
    started = time.monotonic()
    while not check():
        elapsed = time.monotonic() - started
        assert elapsed < bound, f"still not true after {elapsed:.2f} s"
        time.sleep(0.02)
    return time.monotonic() - started


def _caches_agree_across_survivors(a: ServerProcess, b: ServerProcess) -> tuple[float, float]:
    """A grant and a revocation made through ``a`` hold on ``b`` within a second."""
    with a.client() as api:
        assert api.post("/org/acme/serviceaccount", json={"name": "probe"}).status_code == 201
        minted = api.post("/org/acme/serviceaccount/probe/-addKey", json={"description": "probe"}).json()
    with httpx.Client(base_url=b.url, headers={"Authorization": f"Bearer {minted['key']}"}, timeout=10) as probe:
        # b knows the key (not 401) and its lack of rights: a GVC it may not view answers as a missing one.
        assert probe.get("/org/acme/gvc/hot-0").status_code == 404
        policy = {
            "name": "probe-views-gvcs",
            "targetKind": "gvc",
            "target": "all",
            "bindings": [{"permissions": ["view"], "principalLinks": ["/org/acme/serviceaccount/probe"]}],
        }
        with a.client() as api:
            assert api.post("/org/acme/policy", json=policy).status_code == 201
        granted = _until(lambda: probe.get("/org/acme/gvc/hot-0").status_code == 200, CACHE_BOUND_S)
        with a.client() as api:
            dropped = api.patch("/org/acme/serviceaccount/probe", json={"$drop/keys": [minted["name"]]})
            assert dropped.status_code == 200, dropped.text
        revoked = _until(lambda: probe.get("/org/acme/gvc/hot-0").status_code == 401, CACHE_BOUND_S)
    return granted, revoked


def test_replicas_lose_no_update_answer_only_real_conflicts_and_survive_a_kill(
    replicas: list[ServerProcess], fresh_pg_url: str
) -> None:
    a, b, c = replicas
    with a.client() as api:
        for name in RECORDS:
            assert api.post("/org/acme/gvc", json={"name": name}).status_code == 201
    alive, book, stop = {"now": (0, 1, 2)}, Book(), threading.Event()
    threads = [threading.Thread(target=_writer, args=(i, replicas, alive, book, stop)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(LOAD_BEFORE_KILL_S)
        alive["now"] = (0, 1)  # writers stop choosing it; those already talking to it see it die
        c.kill()
        killed_at = datetime.now(UTC)
        granted, revoked = _caches_agree_across_survivors(a, b)
        time.sleep(LOAD_AFTER_KILL_S)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)

    outcomes = book.outcomes
    assert not book.unexpected, book.unexpected[:5]
    successes = [o for o in outcomes if o.status == 200]
    conflicts = [o for o in outcomes if o.status == 409]
    unanswered = [o for o in outcomes if o.status is None]
    assert all(o.replica == 2 for o in unanswered), "a surviving replica dropped a request"
    after_kill = {o.replica for o in successes if o.answered > killed_at + timedelta(seconds=0.5)}
    assert after_kill == {0, 1}, f"after the kill, successes came through {after_kill} only"
    assert len(successes) > 30 and conflicts, f"{len(successes)} successes, {len(conflicts)} conflicts: no contention"

    snapshot = read_postgres(fresh_pg_url)
    check_documents_match_their_rows(snapshot)
    for name in RECORDS:
        key = ("acme", "gvc", "", name)
        updates = check_history(snapshot, key)  # created, then one event per version, consecutive
        events = {e.doc["context"]["version"]: e for e in snapshot.events[key]}
        mine = [o for o in successes if o.name == name]
        # No lost update: each success moved the version it read by one, and no two from the same one.
        assert all(o.version == o.read_version + 1 for o in mine)
        assert len({o.version for o in mine}) == len(mine), f"{name}: two successes from one version"
        for o in mine:
            assert events[o.version].created == o.modified, f"{name} v{o.version}: not the acknowledged write"
        maybe = sum(1 for o in unanswered if o.name == name)
        assert len(mine) <= updates <= len(mine) + maybe, f"{name}: {updates} updates for {len(mine)} successes"
        # Every 409 is real: what moved the record past the version read was committed before the answer.
        for o in (o for o in conflicts if o.name == name):
            moved = events.get(o.read_version + 1)
            assert moved is not None, f"{name}: 409 at v{o.read_version}, which never moved"
            moved_at = datetime.fromisoformat(moved.created.replace("Z", "+00:00"))
            assert moved_at <= o.answered + timedelta(milliseconds=2), f"{name}: 409 before v{o.read_version} moved"
        stored = snapshot.records[key].doc
        for o in mine:
            assert stored["tags"][f"w{o.writer}"] >= o.seq, f"{name}: writer {o.writer}'s update was lost"
    print(
        f"{len(successes)} successes, {len(conflicts)} conflicts, {len(unanswered)} unanswered;"
        f" grant seen in {granted:.2f} s, revocation in {revoked:.2f} s"
    )
