"""The SQL of a commit on SQLite: one connection, one group of writes, one durable transaction.

A process commits in one of two ways, and both run this: in process (``group_commit.py`` on the
store's writer thread), or, with several ``plinth serve`` workers, in the server's committer
(``sqlite_committer.py``), which commits the writes of every worker together. Either way a group
is one ``BEGIN IMMEDIATE`` … ``COMMIT`` under the change counter (``sqlite_cache.py``), each write
in its own ``SAVEPOINT``: a write that fails (a version conflict, an existing name, a limit) is
rolled back alone and gets its own error, the writes before it stay, and the commit itself
failing (locked past ``busy_timeout``, disk full, I/O error) fails the whole group.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from plinth.storage import regex
from plinth.storage import statements as st
from plinth.storage.base import AppendEvent, Delete, Key, Operation, Put, Record, SetMeta, StorageError, Tally
from plinth.storage.sqlite_cache import ChangeCounter, Span

BUSY_TIMEOUT_MS = 10_000
#: Every statement of ``statements.py``, spelled for SQLite once.
SQL = st.rendered("?")

#: What a group's writes each came to: ``None`` when stored, else what rejected it.
Outcomes = list[BaseException | None]


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at ``path`` as every part of the backend opens one."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # LIKE is case-sensitive in PostgreSQL; make SQLite agree.
    conn.execute("PRAGMA case_sensitive_like=ON")
    conn.create_function("regexp", 2, _regexp, deterministic=True)
    return conn


def _regexp(pattern: str, value: Any) -> bool:
    # RE2, linear in the text: this runs on the event loop, once per row (``storage/regex.py``);
    # list_page has already rejected patterns it cannot compile.
    return value is not None and regex.search(pattern, str(value))


class SqliteWriter:
    """The connection a process commits on, and the change counter its commits move."""

    def __init__(self, path: Path, counter: ChangeCounter):
        self.conn = connect(path)
        self.counter = counter

    def commit_group(self, writes: Sequence[Sequence[Operation]]) -> tuple[Outcomes, Span]:
        """Commit ``writes`` in one transaction, in order, each in its own savepoint; answer
        each write's outcome and the commit's span (what it wrote, for the record caches).
        Raises ``StorageError("unavailable")`` when the transaction itself cannot commit:
        then none of them is stored."""
        outcomes: Outcomes = [None] * len(writes)
        written: dict[Key, Record | None] = {}

        def run(conn: sqlite3.Connection) -> None:
            for n, ops in enumerate(writes):
                conn.execute("SAVEPOINT plinth_write")
                try:
                    apply_write(conn, ops)
                except sqlite3.OperationalError:
                    raise  # the connection or the disk failed: the whole group fails
                except Exception as exc:
                    # This write alone is rejected; what the ones before it did stays.
                    conn.execute("ROLLBACK TO plinth_write")
                    outcomes[n] = exc
                else:
                    written.update(written_records(ops))
                conn.execute("RELEASE plinth_write")

        span = self.transaction(run, written)
        return outcomes, span

    def transaction(
        self, work: Callable[[sqlite3.Connection], None], written: dict[Key, Record | None] | None = None
    ) -> Span:
        """``work`` in one immediate transaction, marked on the change counter the record
        caches of every process watch; rolled back if it raises. ``written``: filled by
        ``work`` with what it writes (``ChangeCounter.writing``)."""
        conn = self.conn
        with self.counter.writing(written) as span:
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    work(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                # Locked past busy_timeout, disk full, I/O error: the store cannot take writes.
                raise StorageError("unavailable", None, str(exc)) from exc
        return span

    def close(self) -> None:
        self.conn.close()


def apply_write(conn: sqlite3.Connection, ops: Sequence[Operation]) -> None:
    """One write's operations, inside the group's transaction (its own savepoint)."""
    changes: list[tuple[Any, ...]] = []
    for op in ops:
        _apply(conn, op, changes)
    if changes:
        # Writes are serialized (BEGIN IMMEDIATE, one at a time within a group), so seq
        # order is commit order.
        at = time.time()
        conn.executemany(SQL["INSERT_CHANGE"], [(*c, at) for c in changes])


def key_params(key: Key) -> tuple[str, str, str, str]:
    return (key.org, key.kind, key.parent, key.name)


def written_records(ops: Sequence[Operation]) -> Iterator[tuple[Key, Record | None]]:
    """Each record ``ops`` change, with what it is now: the record a put stores (as ``get``
    would read it back), ``None`` for a delete and for a tally (SQL rewrites the quota's doc)."""
    for op in ops:
        if isinstance(op, Put):
            yield op.record.key, op.record
        elif isinstance(op, Delete | Tally):
            yield op.key, None


def _missing_or_conflict(conn: sqlite3.Connection, key: Key) -> StorageError:
    row = conn.execute(SQL["EXISTS_RESOURCE"], key_params(key)).fetchone()
    return StorageError("not_found" if row is None else "conflict", key)


def _apply(conn: sqlite3.Connection, op: Operation, changes: list[tuple[Any, ...]]) -> None:
    if isinstance(op, Put):
        rec = op.record
        doc = rec.doc.decode()
        if op.expected_version is None:
            try:
                conn.execute(SQL["INSERT_RESOURCE"], (*key_params(rec.key), rec.id, rec.version, doc))
            except sqlite3.IntegrityError as exc:
                raise StorageError("exists", rec.key) from exc
        else:
            cur = conn.execute(
                SQL["UPDATE_RESOURCE"],
                (rec.id, rec.version, doc, *key_params(rec.key), op.expected_version),
            )
            if cur.rowcount != 1:
                raise _missing_or_conflict(conn, rec.key)
        change = st.put_change(op)
        if change is not None:
            changes.append(change)
        owner = key_params(rec.key)
        conn.execute(SQL["DELETE_REFS"], owner)
        if op.refs:
            conn.executemany(SQL["INSERT_REF"], [(*owner, target) for target in sorted(set(op.refs))])
    elif isinstance(op, Delete):
        where = (*key_params(op.key), op.expected_version)
        if op.watched:
            row = conn.execute(SQL["DELETE_RESOURCE_RETURNING"], where).fetchone()
            if row is None:
                raise _missing_or_conflict(conn, op.key)
            changes.append(st.delete_change(op, row[0]))
        else:
            cur = conn.execute(SQL["DELETE_RESOURCE"], where)
            if cur.rowcount != 1:
                raise _missing_or_conflict(conn, op.key)
        conn.execute(SQL["DELETE_REFS"], key_params(op.key))
    elif isinstance(op, AppendEvent):
        conn.execute(SQL["INSERT_EVENT"], (*key_params(op.key), op.id, op.created, op.doc.decode()))
    elif isinstance(op, SetMeta):
        statement, params = st.set_meta(op)
        conn.execute(SQL[statement], params)
    elif isinstance(op, Tally):
        params = st.tally_params(op, key_params(op.key), lambda field: f"$.{field}")
        row = conn.execute(SQL["TALLY_SQLITE"], params).fetchone()
        if row is not None:
            changes.append(st.tally_change(op, row[0]))
        elif conn.execute(SQL["EXISTS_RESOURCE"], key_params(op.key)).fetchone() is not None:
            raise StorageError("limit", op.key)
