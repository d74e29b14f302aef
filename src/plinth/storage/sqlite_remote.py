"""A worker's side of the server's committer: its writes handed over, their outcomes back.

With several ``plinth serve`` workers on one SQLite file, the server process commits for all of
them (``sqlite_committer.py``), so the writes of every worker that arrive while a commit is in
flight share the next one. A worker's :class:`RemoteCommit` sends each write as it comes (a
sender thread batches what queued meanwhile into one message) and does not wait for the answer
before sending more; a receiver thread reads the answers, records each commit's span for the
record cache (``ChangeCounter.add_finished``: the commit's writes, as if this process had made
it) and only then resolves the writes' futures. A write is acknowledged only after the commit
holding it is durable and the change counter has moved past it.

If the committer goes away, writes already handed over get ``unavailable`` (they may or may not
be stored; a client retries), and every later write is committed in this process, as a lone
worker does (``group_commit.py``); the two take turns on the change counter's lock.

The messages are pickles over a Unix socket in a private directory, authenticated by
``multiprocessing.connection``'s challenge with a key only the server and its workers hold;
they are read back by an unpickler that builds only the storage operations (:func:`loads`).
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import logging
import os
import pickle
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any

from plinth.storage.base import Key, Operation, Record, StorageError
from plinth.storage.group_commit import MAX_GROUP, GroupCommit, PendingWrite, resolve
from plinth.storage.sqlite_cache import ChangeCounter, Span

log = logging.getLogger(__name__)

#: Where ``plinth serve`` tells its workers how to reach its committer.
ENV = "PLINTH_SQLITE_COMMITTER"

#: The only classes a message may build.
_CLASSES = frozenset(
    ("plinth.storage.base", name) for name in ("Key", "Record", "Put", "Delete", "AppendEvent", "SetMeta", "Tally")
)


@dataclass(frozen=True)
class CommitterAddress:
    """How to reach the committer of the database at ``database``."""

    socket: str
    authkey: bytes
    database: str

    def to_env(self) -> str:
        return json.dumps({"socket": self.socket, "key": self.authkey.hex(), "database": self.database})

    @classmethod
    def take_from_env(cls) -> CommitterAddress | None:
        """The address ``plinth serve`` left in this worker's environment, taken out of it: the
        key is no business of any program the worker starts."""
        text = os.environ.pop(ENV, None)
        if not text:
            return None
        fields = json.loads(text)
        return cls(fields["socket"], bytes.fromhex(fields["key"]), fields["database"])


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _CLASSES:
            raise pickle.UnpicklingError(f"a committer's message holds no {module}.{name}")
        return super().find_class(module, name)


def dumps(message: Any) -> bytes:
    return pickle.dumps(message, protocol=5)


def loads(data: bytes) -> Any:
    """A message read back, building nothing but the storage's operations, keys and records."""
    return _Unpickler(io.BytesIO(data)).load()


#: A write's outcome on the wire: ``None`` (stored), ``("storage", code, key, message)`` or
#: ``("error", text)`` for anything else (a bug: the worker raises it as such, a 500).
Outcome = tuple[Any, ...] | None


def encode_outcome(error: BaseException | None) -> Outcome:
    if error is None:
        return None
    if isinstance(error, StorageError):
        return ("storage", error.code, error.key, str(error))
    return ("error", f"{type(error).__name__}: {error}")


def decode_outcome(outcome: Outcome) -> BaseException | None:
    if outcome is None:
        return None
    if outcome[0] == "storage":
        return StorageError(outcome[1], outcome[2], outcome[3])
    return RuntimeError(f"the committer failed a write: {outcome[1]}")


def encode_span(span: Span) -> tuple[int, int, dict[Key, Record | None] | None]:
    return (span.before, span.after, span.written)


class _Local:
    """The answer that sends a write to this process's own commit (the committer is gone)."""


_LOCAL = _Local()


class RemoteCommit:
    """Hands this process's writes to the server's committer (see the module docstring)."""

    @classmethod
    def connect(
        cls, address: CommitterAddress, path: Path, counter: ChangeCounter, local: GroupCommit
    ) -> RemoteCommit | None:
        """Connected to the committer at ``address``; ``None`` (commit in this process) when
        it commits another database or cannot be reached."""
        if Path(address.database) != path:
            return None
        try:
            conn = Client(address.socket, family="AF_UNIX", authkey=address.authkey)
        except (OSError, AuthenticationError) as exc:
            log.warning("the server's committer is not reachable (%s): this worker commits its own writes", exc)
            return None
        return cls(conn, counter, local)

    def __init__(self, conn: Connection, counter: ChangeCounter, local: GroupCommit):
        self._conn = conn
        # A second handle on the socket, to shut it down under a receiver blocked reading it.
        self._socket = socket.socket(fileno=os.dup(conn.fileno()))
        self._counter = counter
        self._local = local
        self._ids = itertools.count()
        self._cond = threading.Condition()
        self._outbox: list[PendingWrite] = []
        self._sent: dict[int, list[PendingWrite]] = {}
        self._broken = False
        self._closing = False
        self._sender = threading.Thread(target=self._send_loop, name="plinth-commit-sender", daemon=True)
        self._receiver = threading.Thread(target=self._receive_loop, name="plinth-commit-receiver", daemon=True)
        self._sender.start()
        self._receiver.start()

    async def submit(self, ops: Sequence[Operation]) -> None:
        """Store ``ops`` atomically; return once they are durable, raise what rejected them."""
        loop = asyncio.get_running_loop()
        pending = PendingWrite(ops, loop, loop.create_future())
        with self._cond:
            if self._broken or self._closing:
                pending.done.set_result(_LOCAL)
            else:
                self._outbox.append(pending)
                self._cond.notify()
        if await pending.done is _LOCAL:
            await self._local.submit(ops)

    def _send_loop(self) -> None:
        while True:
            with self._cond:
                while not self._outbox and not self._closing:
                    self._cond.wait()
                if not self._outbox:
                    return
                batch, self._outbox = self._outbox[:MAX_GROUP], self._outbox[MAX_GROUP:]
                if self._broken:
                    _resolve_all(batch, _LOCAL)
                    continue
                batch_id = next(self._ids)
                self._sent[batch_id] = batch
            try:
                self._conn.send_bytes(dumps((batch_id, [p.ops for p in batch])))
            except (OSError, ValueError) as exc:
                # Not sent whole, so never committed: these go to this process's commit.
                with self._cond:
                    self._sent.pop(batch_id, None)
                    self._break(exc)
                _resolve_all(batch, _LOCAL)

    def _receive_loop(self) -> None:
        while True:
            batch: list[PendingWrite] = []
            try:
                batch_id, outcomes, span = loads(self._conn.recv_bytes())
                with self._cond:
                    batch = self._sent.pop(batch_id)
                answers = [decode_outcome(outcome) for outcome in outcomes]
                if len(answers) != len(batch):
                    raise ValueError(f"{len(answers)} answers to {len(batch)} writes")
            except Exception as exc:  # closed, or not an answer of ours: as if it went away
                with self._cond:
                    lost = batch + [p for sent in self._sent.values() for p in sent]
                    self._sent.clear()
                    self._break(exc)
                unknown = "the server's committer stopped before answering: the write may or may not be stored"
                _resolve_all(lost, StorageError("unavailable", None, unknown))
                return
            if span is not None:
                before, after, written = span
                self._counter.add_finished(Span(before, after, written))
            for pending, answer in zip(batch, answers, strict=True):
                resolve(pending, answer)

    def _break(self, exc: BaseException) -> None:
        """(Holding ``_cond``.) From now on this process commits its own writes."""
        if not self._broken and not self._closing:
            log.warning("lost the server's committer (%s): this worker commits its own writes from now on", exc)
        self._broken = True
        self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._sender.join()
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed by the committer
        self._receiver.join()
        self._socket.close()
        self._conn.close()


def _resolve_all(batch: Sequence[PendingWrite], answer: BaseException | _Local | None) -> None:
    for pending in batch:
        resolve(pending, answer)


__all__ = ["ENV", "CommitterAddress", "RemoteCommit", "dumps", "loads"]
