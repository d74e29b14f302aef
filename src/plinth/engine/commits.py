"""The one compare-and-swap retry loop: writes, deletes and seeding commit through it.

Each attempt reads what it needs fresh and builds its operations, every ``Put`` and ``Delete``
carrying the version it read (compare-and-swap). When the store refuses the transaction
because another commit came first, the attempt is run again from its reads, up to
:data:`MAX_ATTEMPTS` times, so concurrent writers never lose an update. An unreachable store
is a 503 at once; a refusal that is the client's to hear (a quota's limit, a stale ``version``
the client sent) is answered instead of retried (:attr:`Commit.refused`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from plinth.engine.store_errors import storage_unavailable
from plinth.metrics import COMMIT_RETRIES
from plinth.storage.base import Operation, Storage, StorageError

#: Attempts before a write that keeps losing races is answered 409.
MAX_ATTEMPTS = 50

T = TypeVar("T")


async def _retry(exc: StorageError) -> Exception | None:
    return None


@dataclass(frozen=True)
class Commit(Generic[T]):
    """One attempt, ready to commit: its operations; what follows the commit (settling what
    depends on it) and answers; and, for a refused transaction, the error to answer instead
    of retrying (``None``: retry)."""

    ops: list[Operation]
    done: Callable[[], Awaitable[T]]
    refused: Callable[[StorageError], Awaitable[Exception | None]] = field(default=_retry)


async def until_committed(
    storage: Storage,
    label: str,
    attempt: Callable[[], Awaitable[Commit[T] | T]],
    too_fast: Callable[[], Exception],
) -> T:
    """Run ``attempt`` until its :class:`Commit` commits, and answer what its ``done`` does; an
    attempt that answers without committing (no change, a dry run) is the answer.

    ``label`` names the kind in the retry metric; ``too_fast`` is the 409 once every attempt
    has lost its race."""
    for _ in range(MAX_ATTEMPTS):
        step = await attempt()
        if not isinstance(step, Commit):
            return step
        try:
            await storage.commit(step.ops)
        except StorageError as exc:
            if exc.code == "unavailable":
                raise storage_unavailable() from exc
            answer = await step.refused(exc)
            if answer is not None:
                raise answer from exc
            COMMIT_RETRIES.labels(label).inc()
            continue  # lost a race: read again and retry
        done: T = await step.done()
        return done
    raise too_fast()
