"""Crash safety: writers keep writing while the server is SIGKILLed and restarted on its store.

Sixteen writer threads create and PATCH GVCs (their own, and a few that all of them share)
against a server that is killed (the whole process group, mid-write) a few times at random
moments and restarted on the same store and port. Each writer keeps a ledger of the writes
the server acknowledged (2xx) with the document it answered; a write that got no answer is
retried until it gets one, since it may or may not have happened.

Afterwards, through the restarted server and from the tables themselves after a last kill:
every acknowledged write is there with at least its version, the latest acknowledged write of
each record with its content; every document is whole and matches its key columns; and each
record's event log is one created event, then one updated event per version, nothing missing.

A process kill loses no page cache, so this proves atomicity and acknowledge-after-commit,
not the fsync a power cut needs (SQLite's synchronous=FULL and PostgreSQL's fsync carry that).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.store_check import (
    Snapshot,
    check_documents_match_their_rows,
    check_history,
    read_postgres,
    read_sqlite,
)
from tests.support import pg
from tests.support.server import free_port, start_server

WRITERS = 16
SHARED = [f"shared-{i}" for i in range(4)]
KILLS = 3
#: How long the server serves between kills, and after the last restart (seconds).
SERVE_S = (1.0, 2.5)
TAIL_S = 1.5
#: Probability that a writer's next write creates a record rather than patching one.
CREATE_P = 0.25
REQUEST_TIMEOUT_S = 15.0


@dataclass
class Ack:
    writer: int
    seq: int
    name: str
    version: int
    doc: dict[str, Any]


@dataclass
class Ledger:
    acks: list[Ack] = field(default_factory=list)
    created: set[str] = field(default_factory=set)  # known to exist: acknowledged, or 409 on a retry
    unexpected: list[str] = field(default_factory=list)
    retries: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Store:
    backend: str
    database_url: str | None
    data_dir: Path

    @property
    def workers(self) -> int:
        # Two processes writing one SQLite file, killed together mid-transaction; PostgreSQL
        # sees every connection drop either way.
        return 2 if self.database_url is None else 1

    def snapshot(self) -> Snapshot:
        if self.database_url:
            return read_postgres(self.database_url)
        return read_sqlite(self.data_dir / "plinth.db")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = pg.create_database() if request.param == "postgres" else None
    try:
        yield Store(request.param, url, tmp_path / "data")
    finally:
        if url:
            pg.drop_database(url)


class Writer(threading.Thread):
    def __init__(self, index: int, url: str, key: str, ledger: Ledger, stop: threading.Event, seed: int):
        super().__init__(name=f"writer-{index}", daemon=True)
        self.index, self.url, self.key, self.ledger, self.stop = index, url, key, ledger, stop
        self.rng = random.Random(seed * 1000 + index)
        self.seq = 0
        self.own: list[str] = []

    def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=REQUEST_TIMEOUT_S) as client:
            while not self.stop.is_set():
                self.seq += 1
                tag, text = {f"w{self.index}": self.seq}, f"writer {self.index} write {self.seq}"
                if not self.own or self.rng.random() < CREATE_P:
                    name = f"w{self.index}-{self.seq}"
                    body = {"name": name, "description": text, "tags": tag}
                    self._until_answered(client, "POST", "/org/acme/gvc", name, body)
                else:
                    name = self.rng.choice(self.own + SHARED)
                    body = {"description": text, "tags": tag}
                    self._until_answered(client, "PATCH", f"/org/acme/gvc/{name}", name, body)

    def _until_answered(self, client: httpx.Client, method: str, path: str, name: str, body: dict[str, Any]) -> None:
        retried = False
        while not self.stop.is_set():
            try:
                response = client.request(method, path, json=body)
            except httpx.TransportError:
                response = None  # the server died under us, or is not back yet
            if response is None or response.status_code >= 500:
                retried = True
                with self.ledger.lock:
                    self.ledger.retries += 1
                time.sleep(0.05)
                continue
            with self.ledger.lock:
                if response.status_code in (200, 201):
                    doc = response.json()
                    self.ledger.acks.append(Ack(self.index, self.seq, name, doc["version"], doc))
                    if method == "POST":
                        self.ledger.created.add(name)
                        self.own.append(name)
                elif method == "POST" and retried and response.status_code == 409:
                    self.ledger.created.add(name)  # the unanswered attempt had committed
                    self.own.append(name)
                else:
                    self.ledger.unexpected.append(f"{method} {path}: {response.status_code} {response.text}")
            return


def test_acknowledged_writes_survive_sigkill_and_records_and_events_agree(store: Store) -> None:
    seed = int(os.environ.get("PLINTH_FAULT_SEED", random.randrange(1_000_000)))
    rng = random.Random(seed)
    port = free_port()
    server = start_server(store.data_dir, store.database_url, workers=store.workers, port=port)
    ledger, stop, kills = Ledger(), threading.Event(), 0
    try:
        with server.client() as api:
            for name in SHARED:
                assert api.post("/org/acme/gvc", json={"name": name}).status_code == 201
        writers = [Writer(i, server.url, server.key, ledger, stop, seed) for i in range(WRITERS)]
        for writer in writers:
            writer.start()
        for _ in range(KILLS):
            time.sleep(rng.uniform(*SERVE_S))
            server.kill()
            kills += 1
            server = start_server(store.data_dir, store.database_url, workers=store.workers, port=port)
        time.sleep(TAIL_S)
        stop.set()
        for writer in writers:
            writer.join(REQUEST_TIMEOUT_S + 5)
            assert not writer.is_alive()
        with server.client() as api:
            served = _all_gvcs(api)  # as a server restarted after a crash serves them
        server.kill()  # and the tables as a crash left them
    finally:
        stop.set()
        server.stop()

    context = f"(seed {seed}, {len(ledger.acks)} acknowledged writes, {ledger.retries} retries)"
    print(f"{store.backend}: {context}, {len(ledger.created)} created")
    assert not ledger.unexpected, f"{context}: {ledger.unexpected[:5]}"
    assert kills == KILLS and ledger.retries > 0, f"{context}: the kills were not felt"
    assert len(ledger.acks) > 50, f"{context}: too little load to mean anything"

    # 1. The tables: whole documents, and histories that agree with the records.
    snapshot = store.snapshot()
    check_documents_match_their_rows(snapshot)
    names = {key[3]: key for key in snapshot.records if key[1] == "gvc"}
    for name in ledger.created | set(SHARED):
        assert name in names, f"{context}: acknowledged create of {name} lost"
    for key in names.values():  # created in the run, acknowledged or not
        check_history(snapshot, key)

    # 2. Every acknowledged write, as the restarted server served it.
    assert served == {name: snapshot.records[key].doc for name, key in names.items()}
    by_name: dict[str, list[Ack]] = defaultdict(list)
    for ack in ledger.acks:
        by_name[ack.name].append(ack)
    for name, acks in by_name.items():
        stored = served[name]
        latest = max(acks, key=lambda a: a.version)
        assert stored["version"] >= latest.version, f"{context}: {name} went back to v{stored['version']}"
        if stored["version"] == latest.version:
            assert stored == latest.doc, f"{context}: {name} v{latest.version} is not what was acknowledged"
        for ack in acks:
            # A writer's tag only grows, so each acknowledged write's tag is there or overtaken.
            assert stored["tags"][f"w{ack.writer}"] >= ack.seq, f"{context}: {name} lost writer {ack.writer}"


def _all_gvcs(api: httpx.Client) -> dict[str, dict[str, Any]]:
    items: dict[str, dict[str, Any]] = {}
    path: str | None = "/org/acme/gvc?limit=1000"
    while path:
        page = api.get(path).json()
        items.update((item["name"], item) for item in page["items"])
        path = next((link["href"] for link in page["links"] if link["rel"] == "next"), None)
    return items
