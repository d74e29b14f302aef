"""Restarts nobody notices: servers stopped with SIGTERM and started again while clients read and
write (``tests/support/restarts.py`` says what the clients retry, and why that is safe).

- Three PostgreSQL replicas restarted one after another, clients round-robin over them: no
  acknowledged write is lost, no 5xx but 503s that a retry resolved, every request answered.
- One SQLite server restarted: the clients see refused connections meanwhile, and nothing else.

Bounded by counts (writes after each restart), not by time; slow-ish (seconds).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from plinth.storage.base import Key, Record
from plinth.storage.postgres import PostgresStorage
from tests.support import pg
from tests.support.restarts import Books, Clients, check_nothing_lost, wait_until
from tests.support.server import ServerProcess, start_server

pytestmark = pytest.mark.slow
ITEMS = [f"/org/acme/gvc/item-{i}" for i in range(4)]
READERS = 2
#: Acknowledged writes, in all, between two restarts: the service is back before the next one.
WRITES_BETWEEN = 40


def _seed(server: ServerProcess) -> None:
    with server.client() as api:
        for path in ITEMS:
            assert api.post("/org/acme/gvc", json={"name": path.rsplit("/", 1)[1]}).status_code == 201


def _restart(server: ServerProcess, port: int, database_url: str | None) -> ServerProcess:
    """SIGTERM (to the server only, as a supervisor sends it), exit 0, start again on the port."""
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0, server.log_path.read_text()[-2000:]
    return start_server(server.data_dir, database_url, port=port)


def _port(server: ServerProcess) -> int:
    return int(server.url.rsplit(":", 1)[1])


def _check(books: Books, read: Callable[[str], dict[str, Any]]) -> None:
    print(books.summary())  # shown with -s: what the restarts cost the clients
    assert books.unexpected == []
    assert books.writes >= WRITES_BETWEEN * 2 and books.reads > 0
    check_nothing_lost(books, read)


def _read_through(server: ServerProcess) -> Callable[[str], dict[str, Any]]:
    def read(path: str) -> dict[str, Any]:
        with server.client() as api:
            reply: dict[str, Any] = api.get(path).json()
            return reply

    return read


def _read_store(database_url: str, paths: list[str]) -> Callable[[str], dict[str, Any]]:
    """What PostgreSQL holds at ``paths``, read past every replica's record cache: a replica may
    show an item's previous version for as long as a write's notification takes to reach it, so
    reading through one would test that delay, not whether a write was lost."""

    async def fetch() -> dict[str, Record | None]:
        store = await PostgresStorage.open(database_url)
        try:
            records = {}
            for path in paths:
                _, org, kind, name = path.strip("/").split("/")  # /org/{org}/{kind}/{name}
                records[path] = await store.get(Key(org, kind, "", name), fresh=True)
            return records
        finally:
            await store.close()

    records = asyncio.run(fetch())

    def read(path: str) -> dict[str, Any]:
        record = records[path]
        assert record is not None, path
        doc: dict[str, Any] = orjson.loads(record.doc)
        return {**doc, "version": record.version}

    return read


@pytest.mark.postgres
def test_a_rolling_restart_of_three_replicas_loses_nothing(tmp_path: Path) -> None:
    database_url = pg.create_database()
    replicas: list[ServerProcess] = []
    try:
        replicas = [start_server(tmp_path / f"replica-{i}", database_url) for i in range(3)]
        _seed(replicas[0])
        urls = [r.url for r in replicas]  # fixed addresses: a restarted replica keeps its port
        clients = Clients(lambda: urls, replicas[0].key, ITEMS, READERS).start()
        try:
            for i in range(len(replicas)):
                before = clients.writes()
                wait_until(lambda before=before: clients.writes() >= before + WRITES_BETWEEN, "writes")
                replicas[i] = _restart(replicas[i], _port(replicas[i]), database_url)
            before = clients.writes()
            wait_until(lambda: clients.writes() >= before + WRITES_BETWEEN, "writes after the last restart")
        finally:
            books = clients.stop()
        _check(books, _read_store(database_url, ITEMS))
    finally:
        for replica in replicas:
            replica.stop()
        pg.drop_database(database_url)


def test_a_restarted_sqlite_server_loses_no_acknowledged_write(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", workers=2)
    try:
        _seed(server)
        url = server.url
        clients = Clients(lambda: [url], server.key, ITEMS, READERS).start()
        try:
            for _ in range(2):
                before = clients.writes()
                wait_until(lambda before=before: clients.writes() >= before + WRITES_BETWEEN, "writes")
                server = _restart(server, _port(server), None)
            before = clients.writes()
            wait_until(lambda: clients.writes() >= before + WRITES_BETWEEN, "writes after the last restart")
        finally:
            books = clients.stop()
        _check(books, _read_through(server))
        assert books.refused > 0  # the clients did see it go away
    finally:
        server.stop()
