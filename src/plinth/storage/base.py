"""The storage protocol: records as stored bytes, written in atomic batches.

Storage knows nothing of HTTP or of kinds: a record is a key, an id, a version and the JSON
bytes the API serves. The engine builds a batch of operations for each change (the record,
its event, the status refreshes it causes) and commits it in one transaction; the backend
enforces the preconditions (a create fails if the name exists, an update or delete fails
unless the stored version is the expected one) and raises :class:`StorageError` with a code.

Both backends (``sqlite.py``, ``postgres.py``) pass ``tests/storage/conformance.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from plinth.storage.query import ListRequest

#: ``invalid``: the backend cannot run the query as asked (a regex it cannot compile).
#: ``limit``: a :class:`Tally` would take a counter past its ceiling.
ErrorCode = Literal["not_found", "exists", "conflict", "unavailable", "invalid", "limit"]

#: Receives a notification's payload, or ``None`` when some may have been lost (see ``listen``).
NotifyCallback = Callable[[str | None], None]


class StorageError(Exception):
    """A failed precondition or an unreachable store. ``key`` names the record concerned."""

    def __init__(self, code: ErrorCode, key: Key | None = None, message: str = ""):
        super().__init__(message or code)
        self.code = code
        self.key = key


@dataclass(frozen=True, slots=True)
class Key:
    """Where a record lives: ``parent`` is the GVC name for GVC-scoped kinds, else ``""``."""

    org: str
    kind: str
    parent: str
    name: str


@dataclass(frozen=True, slots=True)
class Record:
    key: Key
    id: str
    version: int
    doc: bytes


@dataclass(frozen=True, slots=True)
class Put:
    """Create (``expected_version`` is ``None``) or compare-and-swap update of a record.

    ``refs`` are the hrefs the record links to; they replace the previous set, so
    :meth:`Storage.referrers` can find the record from any of them.
    """

    record: Record
    expected_version: int | None
    refs: tuple[str, ...] = ()
    #: Whether the change log (:meth:`Storage.changes`) records it: ``False`` for records no
    #: watch may see (a kind's sealed values).
    watched: bool = True


@dataclass(frozen=True, slots=True)
class Delete:
    key: Key
    expected_version: int
    watched: bool = True


@dataclass(frozen=True, slots=True)
class AppendEvent:
    """An event for the record at ``key``; ``doc`` is its JSON. Events get increasing ``seq``."""

    key: Key
    id: str
    created: str
    doc: bytes


@dataclass(frozen=True, slots=True)
class SetMeta:
    """A server setting kept in the store (bootstrap state, signing keys).

    With ``only_if_absent`` it is written only if the setting does not exist; with ``replacing``
    only if its current value is that one (compare-and-set). Otherwise the operation does
    nothing, silently: the caller reads the setting back to learn whether it won."""

    name: str
    value: str
    only_if_absent: bool = False
    replacing: str | None = None


@dataclass(frozen=True, slots=True)
class Tally:
    """Add ``delta`` to a counter a record keeps in its document (a quota's usage).

    The record's document holds two numbers at the top level, named by the writer: the
    ``counter`` and its ceiling ``ceiling`` (plain field names). The counter becomes ``counter
    + delta`` (never below 0); a positive ``delta`` that would take it past the ceiling fails
    the whole transaction with ``StorageError("limit", key)``. Neither ``version`` nor anything
    else of the record changes, so a counter never makes a concurrent compare-and-swap of the
    record fail. When no record is stored at ``key`` the operation does nothing (there is
    nothing to count against).

    The backend decides inside the transaction, on the stored counter, and serialises the
    tallies of one record (its row lock), so two concurrent writes can never both take the
    last unit. Put tallies last in a batch: the lock is held from the tally to the commit.
    """

    key: Key
    delta: int
    counter: str
    ceiling: str

    def __post_init__(self) -> None:
        # The names become JSON paths in the backends' statements (as parameters): keep them plain.
        for name in (self.counter, self.ceiling):
            if not name.isidentifier():
                raise ValueError(f"a tally's field must be a plain name, not {name!r}")


Operation = Put | Delete | AppendEvent | SetMeta | Tally


@dataclass(frozen=True, slots=True)
class EventRecord:
    seq: int
    doc: bytes


#: What a :class:`Change` did: a create, an update (a status-only rewrite included), a delete.
ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True, slots=True)
class Change:
    """One row of the change log: ``doc`` is the record as stored after the change (for a
    delete, its last state). ``seq`` orders changes as they were committed."""

    seq: int
    key: Key
    type: ChangeType
    doc: bytes


@dataclass(frozen=True, slots=True)
class ChangeBounds:
    """What the change log can answer: changes after ``horizon`` (every seq up to it has been
    trimmed), up to ``last`` (the newest committed seq, never below ``horizon``)."""

    horizon: int
    last: int


@dataclass(frozen=True, slots=True)
class Ref:
    """One row of the links table: the record at ``key`` links to ``target``."""

    key: Key
    target: str


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One row of the event log, with every column (what :meth:`Storage.dump` reads)."""

    seq: int
    key: Key
    id: str
    created: str
    doc: bytes


@dataclass(frozen=True, slots=True)
class MetaEntry:
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class DumpCounts:
    """How many rows of each table a :meth:`Storage.dump` is about to yield."""

    records: int
    refs: int
    events: int
    meta: int


#: A stored row of any table, as :meth:`Storage.dump` yields it and :meth:`Storage.load` takes it.
Row = Record | Ref | StoredEvent | MetaEntry


class Storage(Protocol):
    """One protocol, two backends. Every method may raise ``StorageError("unavailable")``."""

    async def get(self, key: Key, *, fresh: bool = False) -> Record | None:
        """The record at ``key``, or ``None``. A backend may answer from a cache kept coherent
        across replicas (``record_cache.py``); ``fresh`` reads the database itself, for decisions
        a slightly late answer must not make (preconditions of writes, key revocation)."""
        ...

    async def list_page(self, request: ListRequest) -> list[Record]:
        """At most ``request.limit`` records after ``request.start``, in keyset order
        (the sort value, then parent, then name), filtered by ``request.filter``.

        The semantics are ``query.py``'s; a query the backend cannot run raises
        ``StorageError("invalid")``."""
        ...

    async def referrers(self, org: str, href: str, kinds: Sequence[str]) -> list[Record]:
        """Records of the given kinds whose ``refs`` include ``href``."""
        ...

    async def commit(self, ops: Sequence[Operation]) -> None:
        """Apply every operation in one transaction, or none of them.

        Raises ``StorageError("exists")`` for a create whose key exists,
        ``StorageError("conflict")`` for an update or delete whose expected version is not
        the stored one, ``StorageError("not_found")`` when the record is gone.
        """
        ...

    async def events(self, key: Key, after_seq: int, limit: int) -> list[EventRecord]:
        """Events of the record at ``key`` (including those of earlier records of the same
        name) with ``seq > after_seq``, oldest first."""
        ...

    async def get_meta(self, name: str) -> str | None:
        """The value :class:`SetMeta` stored under ``name``, or ``None``."""
        ...

    async def meta_with_prefix(self, prefix: str) -> list[MetaEntry]:
        """Every meta entry whose name starts with ``prefix``, by name (a few: signing keys)."""
        ...

    async def changes(self, after_seq: int, limit: int) -> list[Change]:
        """At most ``limit`` changes with ``seq > after_seq``, oldest first.

        Every :class:`Put` and :class:`Delete` committed with ``watched`` appends one (a create
        ``ADDED``, any other put ``MODIFIED``, a delete ``DELETED``), in the committing
        transaction. Seqs increase in commit order: once a reader has seen ``seq`` N, no change
        with a lower seq commits later, so a reader that resumes after N misses nothing."""
        ...

    async def change_bounds(self) -> ChangeBounds:
        """The range of the change log (see :class:`ChangeBounds`)."""
        ...

    async def trim_changes(self, keep: int, max_age_s: float) -> ChangeBounds:
        """Drop the changes beyond the last ``keep`` seqs or older than ``max_age_s`` (the newest
        one always stays), and move the horizon past them in the same transaction."""
        ...

    async def snapshot(self, request: ListRequest) -> tuple[int, list[Record]]:
        """Every record ``request`` selects (all pages, ``request.limit`` ignored) and the last
        change seq they include, read from one consistent snapshot: the state after exactly
        the changes up to that seq."""
        ...

    def change_marker(self) -> int | None:
        """A value that moves whenever any process commits to this store, cheap to read
        (SQLite's shared change counter), or ``None`` when the backend has none (PostgreSQL:
        listen on ``record_cache.CHANNEL`` instead)."""
        ...

    async def notify(self, channel: str, payload: str) -> None:
        """Tell every replica's listeners on ``channel`` (including this one's) ``payload``.

        Delivery is best effort and not transactional; a backend without replicas
        (SQLite) does nothing.
        """
        ...

    async def listen(self, channel: str, callback: NotifyCallback) -> None:
        """Call ``callback(payload)`` for each later notification on ``channel``.

        Returns once listening has started. The callback runs on the event loop and must
        not block. After a lost connection is re-established the callback receives
        ``None``: notifications may have been missed, so drop whatever they guard.
        A backend without replicas never calls it.
        """
        ...

    def dump(self) -> AsyncIterator[DumpCounts | Row]:
        """Every row of the store, read from one consistent snapshot: first a
        :class:`DumpCounts`, then the records (by key), the refs (by key and target), the
        events (by ``seq``) and the meta entries (by name), each with every column.

        Streams: memory does not grow with the store. Unbounded by ``QUERY_TIMEOUT``.
        """
        ...

    async def is_empty(self) -> bool:
        """Whether no table holds a row (a store migrated but never served or loaded)."""
        ...

    async def load(self, rows: Sequence[Row]) -> None:
        """Insert ``rows`` exactly as given (ids, versions, event ``seq``, meta) in one
        transaction, or none of them. Events appended later get a ``seq`` above every loaded one.

        Raises ``StorageError("exists")`` when a row's key is already stored.
        """
        ...

    async def ping(self) -> None:
        """Raise ``StorageError("unavailable")`` unless the store answers."""
        ...

    async def close(self) -> None: ...
