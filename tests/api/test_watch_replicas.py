"""Watches across three PostgreSQL replicas under concurrent writers through all three: every
watcher, on every replica, sees every change exactly once and in the same (commit) order, and
one that drops its connection and resumes on another replica misses nothing either."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.authz_support import ok
from tests.support import pg
from tests.support.server import ServerProcess, start_server
from tests.support.versions import seq_reader
from tests.support.watching import WatchReader

pytestmark = pytest.mark.postgres

ORG = "acme"
ITEMS = 6
WRITES_PER_ITEM = 8


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[ServerProcess]]:
    database_url = pg.create_database()
    started: list[ServerProcess] = []
    try:
        first = tmp_path_factory.mktemp("watch-replica-0")
        started.append(start_server(first, database_url))
        for n in (1, 2):
            data_dir = tmp_path_factory.mktemp(f"watch-replica-{n}")
            shutil.copy(first / "bootstrap-admin.key", data_dir / "bootstrap-admin.key")
            started.append(start_server(data_dir, database_url))
        yield started
    finally:
        for proc in started:
            proc.stop()
        pg.drop_database(database_url)


def _changes_until_done(reader: WatchReader, done: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """Events until every (name, version) in ``done`` has been seen."""
    seen: list[dict[str, Any]] = []
    left = set(done)
    while left:
        event = reader.next()
        assert event is not None, "the stream ended early"
        if event["type"] == "BOOKMARK":
            continue
        seen.append(event)
        left.discard((event["object"]["name"], event["object"]["version"]))
    return seen


def test_every_watcher_on_every_replica_sees_every_change_once_in_commit_order(
    replicas: list[ServerProcess],
) -> None:
    names = [f"rw-{n}" for n in range(ITEMS)]
    clients = [proc.client() for proc in replicas]
    try:
        for name in names:
            ok(clients[0].post(f"/org/{ORG}/gvc", json={"name": name}), 201)
        path = f"/org/{ORG}/gvc"
        watchers = [WatchReader(proc.url, path, replicas[0].key) for proc in replicas]
        for watcher in watchers:
            assert watcher.status == 200 and watcher.next()["type"] == "BOOKMARK"  # type: ignore[index]
        # The one that will drop its connection and resume on another replica.
        dropping = WatchReader(replicas[0].url, path, replicas[0].key)
        assert dropping.next()["type"] == "BOOKMARK"  # type: ignore[index]

        def write(n: int) -> None:
            client = clients[n % len(clients)]
            for k in range(WRITES_PER_ITEM):
                ok(client.patch(f"/org/{ORG}/gvc/{names[n]}", json={"description": f"{names[n]}-{k}"}))

        writers = [threading.Thread(target=write, args=(n,)) for n in range(ITEMS)]
        for thread in writers:
            thread.start()
        # Mid-way, the dropping watcher leaves and resumes through another replica.
        before = dropping.changes(ITEMS * WRITES_PER_ITEM // 3)
        dropping.close()
        resumed = WatchReader(
            replicas[2].url, path, replicas[0].key, {"resourceVersion": before[-1]["resourceVersion"]}
        )
        for thread in writers:
            thread.join()
        expected = {(name, version) for name in names for version in range(2, WRITES_PER_ITEM + 2)}
        streams = [_changes_until_done(w, expected) for w in watchers]
        earlier = {(e["object"]["name"], e["object"]["version"]) for e in before}
        streams.append(before + _changes_until_done(resumed, expected - earlier))
    finally:
        for client in clients:
            client.close()
    for watcher in [*watchers, resumed]:
        watcher.close()

    seq = seq_reader(replicas[0])  # versions are opaque to clients; the test reads their order
    for stream in streams:
        keys = [(e["object"]["name"], e["object"]["version"]) for e in stream]
        assert len(keys) == len(set(keys)), "a change was delivered twice"
        assert set(keys) == expected
        versions = [seq(e["resourceVersion"]) for e in stream]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)
        for name in names:  # each item's versions in order
            mine = [v for n, v in keys if n == name]
            assert mine == sorted(mine)
    first = [e["resourceVersion"] for e in streams[0]]
    assert all([e["resourceVersion"] for e in stream] == first for stream in streams[1:])


def test_a_write_through_one_replica_reaches_the_watchers_of_the_others(replicas: list[ServerProcess]) -> None:
    with httpx.Client(base_url=replicas[1].url, headers={"Authorization": f"Bearer {replicas[0].key}"}) as api:
        watchers = [WatchReader(proc.url, f"/org/{ORG}/gvc", replicas[0].key) for proc in (replicas[0], replicas[2])]
        for watcher in watchers:
            assert watcher.next()["type"] == "BOOKMARK"  # type: ignore[index]
        ok(api.post(f"/org/{ORG}/gvc", json={"name": "rw-across"}), 201)
        try:
            assert [w.changes(1)[0]["object"]["name"] for w in watchers] == ["rw-across", "rw-across"]
        finally:
            for watcher in watchers:
                watcher.close()
