"""The server's committer (``storage/sqlite_committer.py``): the writes of several worker
processes on one SQLite file share durable commits, each write keeps its own outcome, and a
worker that loses the committer goes on committing its own writes.

Each "worker" here is a :class:`SqliteStorage` of its own in this process, handing its writes to
a real :class:`Committer` over its socket (the change counter's lock and the record caches work
per open file and per storage object, as they do per process). The test holds the change
counter's lock to keep the committer's first commit waiting, and waits until the committer has
read the writes sent meanwhile: the order is forced by the lock, not by timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pickle
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from multiprocessing.connection import Client, Listener
from pathlib import Path

import pytest

from plinth.storage.base import Put, StorageError
from plinth.storage.sqlite import SqliteStorage
from plinth.storage.sqlite_committer import Committer
from plinth.storage.sqlite_remote import CommitterAddress, decode_outcome, dumps, encode_outcome, loads
from tests.aio import RunAsync
from tests.storage.records import assert_same, create, expect_error, make_record, new_org, next_version

#: How long a test waits for the committer to reach a state before it fails.
WAIT_S = 15.0


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"the committer never {what}"
        await asyncio.sleep(0.01)


async def taken(committer: Committer, received: int) -> None:
    """Until the committer has read ``received`` messages and taken every one into a commit
    (with the counter's lock held by the test, the commit then waits for it)."""
    await until(lambda: committer.received == received and committer.waiting() == 0, "took the write")


async def queued(committer: Committer, received: int, waiting: int) -> None:
    await until(lambda: committer.received == received and committer.waiting() == waiting, "queued the writes")


@pytest.fixture
def committer(tmp_path: Path, run_async: RunAsync) -> Iterator[Committer]:
    path = tmp_path / "plinth.db"
    run_async(run_async(SqliteStorage.open(path)).close())  # the tables, as plinth serve makes them first
    started = Committer(path).start()
    yield started
    started.stop()


@contextlib.asynccontextmanager
async def workers(committer: Committer, count: int = 2) -> AsyncIterator[list[SqliteStorage]]:
    path = Path(committer.address.database)
    opened = [await SqliteStorage.open(path, committer.address) for _ in range(count)]
    try:
        yield opened
    finally:
        for store in opened:
            await store.close()


@contextlib.contextmanager
def counter_lock(committer: Committer) -> Iterator[None]:
    """Hold the change counter's lock: the committer's next commit waits for it."""
    fd = os.open(Path(committer.address.database + "-changes"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_writes_of_two_workers_share_one_commit(committer: Committer, run_async: RunAsync) -> None:
    org = new_org()
    records = [make_record(org, f"r-{n}") for n in range(3)]

    async def scenario() -> None:
        async with workers(committer) as (a, b):
            assert a._remote is not None and b._remote is not None
            with counter_lock(committer):
                first = asyncio.ensure_future(create(a, [records[0]]))
                await taken(committer, 1)  # and waiting for the lock
                later = [asyncio.ensure_future(create(a, [records[1]])), asyncio.ensure_future(create(b, [records[2]]))]
                await queued(committer, 3, 2)
                assert not first.done()  # not acknowledged before its commit
            await asyncio.gather(first, *later)
            for store in (a, b):  # each worker reads every write, its own and the other's
                for record in records:
                    assert_same(await store.get(record.key), record)

    run_async(scenario())
    assert committer.writes == 3
    assert committer.commits <= 2
    assert committer.shared_commits >= 1


def _sockets() -> int:
    """Sockets this process holds open (the committer's and the test's workers')."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def test_a_worker_that_goes_away_leaves_no_connection_open(committer: Committer, run_async: RunAsync) -> None:
    """A restarted worker must not leave its connection (two sockets here) open behind it:
    the commit thread closes it once the answers queued for it are sent."""
    org = new_org()

    async def scenario() -> None:
        before = _sockets()
        async with workers(committer) as (a, b):
            await create(a, [make_record(org, "from-a")])
            await create(b, [make_record(org, "from-b")])
            assert committer.connections() == 2
        await until(lambda: committer.connections() == 0, "closed the connections of the workers gone")
        # At most as many as before: a socket another test left to the collector may go meanwhile.
        await until(lambda: _sockets() <= before, "closed their sockets")
        async with workers(committer, 1) as (c,):  # and a new worker is served as before
            record = make_record(org, "from-c")
            await create(c, [record])
            assert_same(await c.get(record.key), record)

    run_async(scenario())
    assert committer.writes == 3


def test_a_conflict_fails_alone_in_a_shared_commit(committer: Committer, run_async: RunAsync) -> None:
    org = new_org()
    kept, fresh = make_record(org, "kept"), make_record(org, "fresh")

    async def scenario() -> None:
        async with workers(committer) as (a, b):
            await create(a, [kept])
            stale = Put(next_version(kept), expected_version=kept.version + 5)
            with counter_lock(committer):
                blocker = asyncio.ensure_future(create(b, [make_record(org, "blocker")]))
                await taken(committer, 2)  # the create of ``kept``, then this one
                conflicting = asyncio.ensure_future(a.commit([stale]))
                stored = asyncio.ensure_future(create(b, [fresh]))
                await queued(committer, 4, 2)
            await blocker
            await expect_error("conflict", conflicting)
            await stored
            assert_same(await a.get(kept.key), kept)  # the stale write changed nothing
            assert_same(await a.get(fresh.key), fresh)

    run_async(scenario())
    assert committer.shared_commits >= 1


def test_a_worker_that_loses_the_committer_commits_its_own_writes(committer: Committer, run_async: RunAsync) -> None:
    org = new_org()
    handed, later = make_record(org, "handed"), make_record(org, "later")

    async def scenario() -> None:
        async with workers(committer, 1) as (a,):
            with counter_lock(committer):
                pending = asyncio.ensure_future(create(a, [handed]))
                await taken(committer, 1)
                for client in committer._clients:  # the committer goes away before answering
                    client.shutdown(socket.SHUT_RDWR)
                error = await expect_error("unavailable", pending)
                assert "may or may not be stored" in str(error)
            groups = a._group.groups
            await create(a, [later])
            assert a._group.groups == groups + 1  # committed by this worker itself
            assert_same(await a.get(later.key), later)
            # The handed write is stored or not, whichever of the two commits takes the lock
            # first: it was never acknowledged, so either is right.

    run_async(scenario())


def test_a_client_without_the_key_is_refused_and_commits_its_own(committer: Committer, run_async: RunAsync) -> None:
    wrong = replace(committer.address, authkey=b"x" * 32)
    record = make_record(new_org(), "alone")

    async def scenario() -> None:
        store = await SqliteStorage.open(Path(committer.address.database), wrong)
        try:
            assert store._remote is None
            await create(store, [record])
            assert_same(await store.get(record.key), record)
        finally:
            await store.close()

    run_async(scenario())
    assert committer.writes == 0


def test_a_client_that_sends_no_message_is_dropped_and_the_others_served(
    committer: Committer, run_async: RunAsync
) -> None:
    record = make_record(new_org(), "served")
    rogue = Client(committer.address.socket, family="AF_UNIX", authkey=committer.address.authkey)
    try:
        rogue.send_bytes(pickle.dumps(os.system))
        assert rogue.poll(10), "the committer neither answered nor closed the connection"
        with pytest.raises(EOFError):
            rogue.recv_bytes()  # its connection is closed, nothing is answered

        async def scenario() -> None:
            async with workers(committer, 1) as (a,):
                await create(a, [record])
                assert a._remote is not None and not a._remote._broken

        run_async(scenario())
    finally:
        rogue.close()
    assert committer.writes == 1


def test_a_worker_given_an_answer_it_cannot_read_commits_its_own_writes(tmp_path: Path, run_async: RunAsync) -> None:
    """A committer that answers nonsense (here a listener of the test's own, answering a batch
    with the wrong number of outcomes) is treated as gone: 503 for what was in flight, and the
    worker's later writes committed by the worker itself."""
    path = tmp_path / "plinth.db"
    run_async(run_async(SqliteStorage.open(path)).close())
    address = CommitterAddress(str(tmp_path / "c.sock"), b"k" * 32, str(path))
    listener = Listener(address.socket, family="AF_UNIX", authkey=address.authkey)
    org = new_org()

    def answer_wrongly() -> None:
        with listener.accept() as conn:
            batch_id, writes = loads(conn.recv_bytes())
            conn.send_bytes(dumps((batch_id, [None] * (len(writes) + 1), None)))
            conn.poll(10)  # until the worker lets go

    peer = threading.Thread(target=answer_wrongly, daemon=True)
    peer.start()

    async def scenario() -> None:
        store = await SqliteStorage.open(path, address)
        try:
            await expect_error("unavailable", create(store, [make_record(org, "in-flight")]))
            later = make_record(org, "later")
            await create(store, [later])
            assert_same(await store.get(later.key), later)
        finally:
            await store.close()

    try:
        run_async(scenario())
    finally:
        peer.join(15)
        listener.close()


def test_messages_build_only_the_storage_operations() -> None:
    record = make_record(new_org(), "r")
    message = (7, [[Put(record, None, ("/org/o/gvc/g",))]])
    assert loads(dumps(message)) == message
    with pytest.raises(pickle.UnpicklingError, match=r"holds no posix\.system"):
        loads(pickle.dumps(os.system))
    conflict = decode_outcome(encode_outcome(StorageError("conflict", record.key)))
    assert isinstance(conflict, StorageError) and (conflict.code, conflict.key) == ("conflict", record.key)
    bug = decode_outcome(encode_outcome(KeyError("boom")))
    assert isinstance(bug, RuntimeError) and "KeyError" in str(bug)  # answered as a bug: a 500
    assert decode_outcome(encode_outcome(None)) is None
