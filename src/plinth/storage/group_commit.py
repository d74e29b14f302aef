"""Group commit for SQLite: concurrent writes of one process share one durable commit.

A durable commit costs an fsync of the WAL (``synchronous=FULL``) and the change counter's
lock; with many clients writing, that is most of what a write waits for. So a write does not
open its own transaction: :meth:`GroupCommit.submit` queues it, and the writer thread takes
every write queued so far into one ``BEGIN IMMEDIATE`` … ``COMMIT``. Writes that arrive while a
commit is in flight go into the next one.

The contract each writer keeps:

- **Acknowledged only when durable.** A write's future is resolved after the ``COMMIT`` of the
  transaction holding it has returned (the WAL is synced), never before: a crash loses only
  writes nobody was told succeeded.
- **Isolated.** Each write runs inside its own ``SAVEPOINT``. A write that fails (a version
  conflict, an existing name, a limit) is rolled back to its savepoint alone and gets its own
  error; the others in the group still commit. Writes run one after the other in queue order,
  so each sees the writes before it exactly as if they had committed separately.
- **All or nothing on failure of the commit itself.** When the transaction cannot commit
  (locked past ``busy_timeout``, disk full, I/O error), every write in it gets that error and
  none of them is stored.

The transaction itself is ``sqlite_writer.py``'s. This queue is what a process with one
writer uses; with several ``plinth serve`` workers, each worker hands its writes to the
server's committer instead (``sqlite_committer.py``), which groups the writes of every worker.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from plinth.storage.base import Operation

#: Writes per transaction at most: bounds how long one group holds the lock other processes
#: wait for, and how much one failed commit takes down with it.
MAX_GROUP = 64

#: Commit a group of writes in one transaction, in order (``SqliteWriter.commit_group``):
#: each write's outcome (``None``: stored, else what rejected it alone); raises when the
#: transaction itself failed, and then none is stored.
CommitGroup = Callable[[Sequence[Sequence[Operation]]], Sequence[BaseException | None]]


@dataclass(slots=True)
class PendingWrite:
    """A write waiting for its commit: its operations, and the future its writer awaits on its
    own loop (:func:`resolve` answers it from any thread)."""

    ops: Sequence[Operation]
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[Any]


class GroupCommit:
    """The queue of writes waiting for the writer thread, and the drain that commits them."""

    def __init__(
        self,
        executor: Executor,
        commit_group: CommitGroup,
        max_group: int = MAX_GROUP,
    ):
        self._executor = executor
        self._commit = commit_group
        self._max = max_group
        self._lock = threading.Lock()
        self._queue: list[PendingWrite] = []
        self._draining = False
        #: Groups committed and writes in them, for the metrics and the tests.
        self.groups = 0
        self.writes = 0

    async def submit(self, ops: Sequence[Operation]) -> None:
        """Store ``ops`` atomically; return once they are durable, raise what rejected them."""
        loop = asyncio.get_running_loop()
        write = PendingWrite(ops, loop, loop.create_future())
        with self._lock:
            self._queue.append(write)
            start = not self._draining
            self._draining = True
        if start:
            try:
                self._executor.submit(self._drain)
            except BaseException:
                with self._lock:
                    self._draining = False
                raise
        await write.done

    def _drain(self) -> None:
        """On the writer thread: commit groups until the queue is empty."""
        while True:
            with self._lock:
                group, self._queue = self._queue[: self._max], self._queue[self._max :]
                if not group:
                    self._draining = False
                    return
            self._commit_group(group)

    def _commit_group(self, group: list[PendingWrite]) -> None:
        failure: BaseException | None = None
        outcomes: Sequence[BaseException | None] = ()
        try:
            outcomes = self._commit([write.ops for write in group])
        except BaseException as exc:
            failure = exc
        else:
            self.groups += 1
            self.writes += sum(1 for outcome in outcomes if outcome is None)
        for n, write in enumerate(group):
            resolve(write, failure if failure is not None else outcomes[n])


def resolve(write: PendingWrite, answer: BaseException | object) -> None:
    """Resolve ``write``'s future on its own loop (this runs on a writer's thread): raise
    ``answer`` in its writer if it is an exception, else return it."""

    def answered() -> None:
        if write.done.done():
            return  # the writer was cancelled; what it wrote is stored (or not) all the same
        if isinstance(answer, BaseException):
            write.done.set_exception(answer)
        else:
            write.done.set_result(answer)

    try:
        write.loop.call_soon_threadsafe(answered)
    except RuntimeError:
        pass  # its loop is closed: nobody is waiting for the answer


__all__ = ["MAX_GROUP", "GroupCommit", "PendingWrite", "resolve"]
