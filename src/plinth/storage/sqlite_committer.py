"""The server's committer: one durable commit for the writes of every worker process.

Each process of a SQLite store groups its own concurrent writes into one commit
(``group_commit.py``). With several ``plinth serve`` workers that is not enough: two processes
cannot share a transaction, so their groups took turns on the write lock, each paying its own
fsync, and two workers wrote no faster than one. So with more than one worker, ``plinth serve``
runs a :class:`Committer` in its own (supervising) process, and the workers hand it their writes
(``sqlite_remote.py``). Its one commit thread takes every write queued so far, from every
worker (at most :data:`MAX_COMBINED`), into one transaction (``SqliteWriter.commit_group``:
each write in its own savepoint, in arrival order; a write that fails is rolled back alone and
gets its own error, a 409 stays a 409), commits it durably, moves the change counter as any
commit does, and only then answers each worker: every write's outcome and what the commit wrote
(for the worker's record cache). Writes that arrive while a commit is in flight go into the
next one. A crash of the committer loses only writes nobody was told succeeded.

One reader thread per worker connection reads its messages; the commit thread alone touches
the database and answers, and closes a connection whose worker went away once every answer
queued for it is sent (a restarted worker leaves nothing open behind). Other processes writing
the same file (another ``plinth serve``, ``plinth restore``) take turns with it on the change
counter's lock, as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from pathlib import Path
from typing import Any

from plinth.metrics import SQLITE_COMMITS
from plinth.storage.base import Operation, StorageError
from plinth.storage.sqlite_cache import ChangeCounter, Span
from plinth.storage.sqlite_remote import CommitterAddress, dumps, encode_outcome, encode_span, loads
from plinth.storage.sqlite_writer import Outcomes, SqliteWriter

log = logging.getLogger(__name__)
_SHARED = SQLITE_COMMITS.labels("committer", "shared")
_ONE = SQLITE_COMMITS.labels("committer", "one")

#: Writes per transaction at most, all workers together: bounds how long one commit holds the
#: lock and how much one failed commit takes down with it.
MAX_COMBINED = 256
#: How often the accept loop looks whether it was told to stop (seconds).
ACCEPT_POLL_S = 0.2


@dataclass(slots=True)
class _Batch:
    """One message of one worker: its id there, and its writes."""

    conn: Connection
    client: socket.socket
    batch_id: int
    writes: list[list[Operation]]


class Committer:
    """Commits the writes its clients send, many clients' writes in one transaction."""

    def __init__(self, database: Path):
        self._directory = tempfile.mkdtemp(prefix="plinth-commit-")  # 0700: only this user
        self.address = CommitterAddress(
            os.path.join(self._directory, "commit.sock"), secrets.token_bytes(32), str(database)
        )
        self._counter = ChangeCounter(database, keeps_own=False)
        self._writer = SqliteWriter(database, self._counter)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.address.socket)
        self._listener.listen(64)
        self._listener.settimeout(ACCEPT_POLL_S)
        self._cond = threading.Condition()
        self._queue: list[_Batch] = []
        self._stopping = False
        self._clients: list[socket.socket] = []
        #: Connections whose worker went away, for the commit thread to close.
        self._closing: list[tuple[Connection, socket.socket]] = []
        self._threads = [
            threading.Thread(target=self._accept_loop, name="plinth-committer-accept", daemon=True),
            threading.Thread(target=self._commit_loop, name="plinth-committer", daemon=True),
        ]
        #: Messages read, transactions committed and writes stored, for the tests.
        self.received = 0
        self.commits = 0
        self.writes = 0
        #: Commits that held writes of more than one client.
        self.shared_commits = 0

    def start(self) -> Committer:
        for thread in self._threads:
            thread.start()
        return self

    def _accept_loop(self) -> None:
        while not self._stopping:
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed: stopping
            client.settimeout(None)
            conn = Connection(os.dup(client.fileno()))
            try:
                deliver_challenge(conn, self.address.authkey)
                answer_challenge(conn, self.address.authkey)
            except Exception as exc:  # a wrong key, or a client that went away
                log.warning("refused a connection to the committer: %s", exc)
                conn.close()
                client.close()
                continue
            with self._cond:
                self._clients.append(client)
            name = "plinth-committer-read"
            threading.Thread(target=self._read_loop, args=(conn, client), name=name, daemon=True).start()

    def _read_loop(self, conn: Connection, client: socket.socket) -> None:
        try:
            self._read_messages(conn, client)
        finally:
            with self._cond:  # closed by the commit thread, after the answers queued for it
                self._closing.append((conn, client))
                self._cond.notify()

    def _read_messages(self, conn: Connection, client: socket.socket) -> None:
        while True:
            try:
                batch_id, writes = loads(conn.recv_bytes())
            except (EOFError, OSError):
                return  # the worker stopped (or we are stopping)
            except Exception as exc:
                # Not a message of ours: drop the connection. Its worker sees it close, answers
                # what it had sent with 503, and commits its own writes from then on.
                log.error("a committer's client sent what is not a message (%s): closing its connection", exc)
                with contextlib.suppress(OSError):
                    client.shutdown(socket.SHUT_RDWR)
                return
            with self._cond:
                self.received += 1
                self._queue.append(_Batch(conn, client, batch_id, writes))
                self._cond.notify()

    def _commit_loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing and not self._stopping:
                    self._cond.wait()
                if not self._queue and not self._closing:
                    return
                batches, self._queue = _take(self._queue)
                # A connection is closed once none of its messages waits for an answer.
                waiting = {id(batch.conn) for batch in self._queue}
                closing = [pair for pair in self._closing if id(pair[0]) not in waiting]
                self._closing = [pair for pair in self._closing if id(pair[0]) in waiting]
            try:
                if batches:
                    self._commit(batches)
            except Exception:
                # Answers that cannot be given: close their connections, so that those workers
                # answer 503 for what they had sent and commit their own writes from now on.
                log.exception("the committer could not answer a group: closing the connections it came from")
                for batch in batches:
                    with contextlib.suppress(OSError):
                        batch.client.shutdown(socket.SHUT_RDWR)
            finally:
                self._close(closing)

    def _close(self, pairs: list[tuple[Connection, socket.socket]]) -> None:
        for conn, client in pairs:
            with self._cond:
                if client in self._clients:
                    self._clients.remove(client)
            conn.close()
            client.close()

    def connections(self) -> int:
        """Worker connections open now."""
        with self._cond:
            return len(self._clients)

    def _commit(self, batches: list[_Batch]) -> None:
        writes = [ops for batch in batches for ops in batch.writes]
        span: Span | None = None
        try:
            outcomes, span = self._writer.commit_group(writes)
        except StorageError as exc:
            outcomes = [exc] * len(writes)
        except Exception as exc:  # a bug: every write of the group gets it, as in process
            log.exception("the committer failed a group")
            outcomes = [exc] * len(writes)
        else:
            self.commits += 1
            self.writes += sum(1 for outcome in outcomes if outcome is None)
            shared = len({id(batch.conn) for batch in batches}) > 1
            self.shared_commits += shared
            (_SHARED if shared else _ONE).inc()
        encoded_span = encode_span(span) if span is not None else None
        start = 0
        for batch in batches:
            mine: Outcomes = outcomes[start : start + len(batch.writes)]
            start += len(batch.writes)
            reply: Any = (batch.batch_id, [encode_outcome(o) for o in mine], encoded_span)
            try:
                batch.conn.send_bytes(dumps(reply))
            except OSError:
                pass  # the worker is gone; nobody waits for these answers

    def waiting(self) -> int:
        """Messages read and not yet taken into a commit."""
        with self._cond:
            return len(self._queue)

    def stop(self) -> None:
        """Commit what is queued, answer it, and stop; the workers have stopped by now."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            clients = list(self._clients)
        for thread in self._threads:
            thread.join()
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            client.close()
        self._listener.close()
        self._writer.close()
        self._counter.close()
        shutil.rmtree(self._directory, ignore_errors=True)


def _take(queue: list[_Batch]) -> tuple[list[_Batch], list[_Batch]]:
    """The first batches of ``queue`` holding at most :data:`MAX_COMBINED` writes (at least
    one batch), and the rest."""
    taken, count = 0, 0
    while taken < len(queue) and (count == 0 or count + len(queue[taken].writes) <= MAX_COMBINED):
        count += len(queue[taken].writes)
        taken += 1
    return queue[:taken], queue[taken:]


__all__ = ["MAX_COMBINED", "Committer"]
