"""The log store: one SQLite file under the controller's state directory, never Plinth's store.

Logs are written often and read rarely; keeping them out of the API's store keeps them off its
write path. Tables:

- ``workloads`` (org, gvc, workload) with the bytes of lines each holds;
- ``streams``: one per set of labels (a container's stdout or stderr) of a workload, its labels
  as JSON;
- ``lines``: ``(id, workload_id, ts, stream_id, line)``, ``id`` growing with each line collected
  (``AUTOINCREMENT``, never reused: a tail follows it), indexed on ``(workload_id, ts)``, so
  "the last 1,000 lines of a workload" is one walk down an index whatever else is stored;
- ``positions``: how far each container's log file has been read (file, inode, offset),
  written **in the same transaction** as the lines read up to there, so a collector that stops
  at any instant starts again where the store says, with nothing lost or stored twice.

**Bounded per workload.** A workload holds at most ``retention_bytes`` (each line counts its
UTF-8 bytes plus :data:`ROW_OVERHEAD`); past it, its oldest lines go first, down to nine tenths
of the bound (so trimming is not paid on every append).

Writes go through one connection (the collector's, under a lock); reads open their own
connection per thread (WAL mode: readers never wait on the writer), so queries may run in
worker threads beside collection.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plinth.files import private_dir, private_sqlite
from plinth.runtime.logs.records import Record

#: Bytes a line counts beyond its text (its row, its index entry), for the bound.
ROW_OVERHEAD = 32
#: The default bound of one workload's lines.
DEFAULT_RETENTION_BYTES = 16 * 1024 * 1024
#: Rows fetched at a time by a scan.
BATCH = 256

SCHEMA = """
CREATE TABLE IF NOT EXISTS workloads (
    id INTEGER PRIMARY KEY, org TEXT NOT NULL, gvc TEXT NOT NULL, workload TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0, UNIQUE (org, gvc, workload));
CREATE TABLE IF NOT EXISTS streams (
    id INTEGER PRIMARY KEY, workload_id INTEGER NOT NULL, labels TEXT NOT NULL, UNIQUE (workload_id, labels));
CREATE TABLE IF NOT EXISTS lines (
    id INTEGER PRIMARY KEY AUTOINCREMENT, workload_id INTEGER NOT NULL, ts INTEGER NOT NULL,
    stream_id INTEGER NOT NULL, line TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS lines_by_time ON lines (workload_id, ts);
CREATE TABLE IF NOT EXISTS positions (
    container_id TEXT PRIMARY KEY, path TEXT NOT NULL, inode INTEGER NOT NULL, offset INTEGER NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Position:
    """How far a container's log file was read: the file, its inode (a rotated file is a new
    one) and the offset of the first byte not yet taken."""

    path: str
    inode: int
    offset: int


@dataclass(frozen=True, slots=True)
class Stream:
    """One stream of an org: its id, its workload's id and its labels."""

    id: int
    workload_id: int
    labels: Mapping[str, str]


#: A stored line: (id, ts, stream id, text).
Row = tuple[int, int, int, str]


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash may lose the last commits, never corrupt
    return conn


class LogStore:
    """The log store in the file ``path`` (created when missing); module docstring."""

    def __init__(self, path: Path, retention_bytes: int = DEFAULT_RETENTION_BYTES) -> None:
        if retention_bytes <= 0:
            raise ValueError("the log retention must be a positive number of bytes")
        self.path, self.retention_bytes = Path(path), retention_bytes
        # The workloads' own output: not for other users of the machine (0700 directory, 0600
        # files from their first byte, the WAL's included).
        private_dir(self.path.parent, tighten_existing=False)
        private_sqlite(self.path)
        self._lock = threading.Lock()
        self._db = _connect(self.path)
        self._db.executescript(SCHEMA)
        self._ids: dict[tuple[str, ...], int] = {}  # (org, gvc, workload[, labels json]) -> id
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []

    def close(self) -> None:
        """Close the writer and every thread's reader (no call may be running)."""
        with self._lock:
            self._db.close()
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    # Writing (the collector)

    def position(self, container_id: str) -> Position | None:
        with self._lock:
            row = self._db.execute(
                "SELECT path, inode, offset FROM positions WHERE container_id = ?", (container_id,)
            ).fetchone()
        return Position(*row) if row else None

    def positions(self) -> dict[str, Position]:
        with self._lock:
            rows = self._db.execute("SELECT container_id, path, inode, offset FROM positions").fetchall()
        return {row[0]: Position(*row[1:]) for row in rows}

    def forget(self, container_ids: Iterable[str]) -> None:
        """Drop the positions of containers that are gone (their lines stay)."""
        with self._lock:
            self._db.executemany("DELETE FROM positions WHERE container_id = ?", [(c,) for c in container_ids])

    def append(
        self, container_id: str, position: Position, labels: Mapping[str, str], records: Sequence[Record]
    ) -> int:
        """Store ``records`` of one container (``labels`` but ``stream``, which each record
        gives) and its new ``position``, in one transaction; then trim the workload to its
        bound. Answers the id of the last line stored (0 when there were none)."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                workload = self._workload_id(labels["org"], labels["gvc"], labels["workload"])
                stream_ids = {
                    s: self._stream_id(workload, {**labels, "stream": s}) for s in {r.stream for r in records}
                }
                rows = [(workload, r.ts, stream_ids[r.stream], r.line) for r in records]
                db.executemany("INSERT INTO lines (workload_id, ts, stream_id, line) VALUES (?, ?, ?, ?)", rows)
                size = sum(len(r.line.encode()) + ROW_OVERHEAD for r in records)
                db.execute("UPDATE workloads SET bytes = bytes + ? WHERE id = ?", (size, workload))
                db.execute(
                    "INSERT INTO positions (container_id, path, inode, offset) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (container_id) DO UPDATE SET path = excluded.path, inode = excluded.inode, "
                    "offset = excluded.offset",
                    (container_id, position.path, position.inode, position.offset),
                )
                self._trim(workload)
                last = (
                    int(db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lines'").fetchone()[0]) if rows else 0
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                self._ids.clear()  # ids made in the rolled-back transaction are gone
                raise
        return last

    def _workload_id(self, org: str, gvc: str, workload: str) -> int:
        key = (org, gvc, workload)
        if key not in self._ids:
            self._db.execute("INSERT OR IGNORE INTO workloads (org, gvc, workload) VALUES (?, ?, ?)", key)
            row = self._db.execute(
                "SELECT id FROM workloads WHERE org = ? AND gvc = ? AND workload = ?", key
            ).fetchone()
            self._ids[key] = int(row[0])
        return self._ids[key]

    def _stream_id(self, workload: int, labels: Mapping[str, str]) -> int:
        text = json.dumps(dict(sorted(labels.items())), separators=(",", ":"))
        key = (str(workload), text)
        if key not in self._ids:
            self._db.execute("INSERT OR IGNORE INTO streams (workload_id, labels) VALUES (?, ?)", (workload, text))
            row = self._db.execute("SELECT id FROM streams WHERE workload_id = ? AND labels = ?", (workload, text))
            self._ids[key] = int(row.fetchone()[0])
        return self._ids[key]

    def _trim(self, workload: int) -> None:
        """Drop the workload's oldest lines while it is over its bound (to nine tenths of it)."""
        (size,) = self._db.execute("SELECT bytes FROM workloads WHERE id = ?", (workload,)).fetchone()
        if size <= self.retention_bytes:
            return
        excess = size - self.retention_bytes * 9 // 10
        freed, cut = 0, None
        oldest = self._db.execute(
            "SELECT id, ts, length(CAST(line AS BLOB)) FROM lines WHERE workload_id = ? ORDER BY ts, id", (workload,)
        )
        for line_id, ts, length in oldest:
            freed += length + ROW_OVERHEAD
            cut = (ts, line_id)
            if freed >= excess:
                break
        oldest.close()
        if cut is not None:
            self._db.execute(
                "DELETE FROM lines WHERE workload_id = ? AND (ts < ? OR (ts = ? AND id <= ?))",
                (workload, cut[0], cut[0], cut[1]),
            )
            self._db.execute("UPDATE workloads SET bytes = bytes - ? WHERE id = ?", (freed, workload))

    def drop_workload(self, org: str, gvc: str, workload: str) -> int:
        """Delete every line of a workload (the caller's choice: its deletion, say); answers how
        many went. A workload of that name made later starts with none."""
        with self._lock:
            db = self._db
            row = db.execute(
                "SELECT id FROM workloads WHERE org = ? AND gvc = ? AND workload = ?", (org, gvc, workload)
            )
            found = row.fetchone()
            if found is None:
                return 0
            db.execute("BEGIN IMMEDIATE")
            try:
                gone = db.execute("DELETE FROM lines WHERE workload_id = ?", found).rowcount
                db.execute("DELETE FROM streams WHERE workload_id = ?", found)
                db.execute("DELETE FROM workloads WHERE id = ?", found)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            finally:
                self._ids.clear()
        return int(gone)

    # Reading (queries and tails, from any thread)

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = _connect(self.path)
            with self._lock:
                self._readers.append(conn)
        return conn

    def streams(self, org: str) -> list[Stream]:
        """Every stream of ``org``."""
        rows = self._reader().execute(
            "SELECT s.id, s.workload_id, s.labels FROM streams s JOIN workloads w ON w.id = s.workload_id "
            "WHERE w.org = ?",
            (org,),
        )
        return [Stream(int(sid), int(wid), json.loads(labels)) for sid, wid, labels in rows]

    def workloads(self, org: str | None = None) -> set[tuple[str, str, str]]:
        """``(org, gvc, workload)`` of each workload holding lines (``org``'s only, when given)."""
        sql = "SELECT org, gvc, workload FROM workloads"
        rows = self._reader().execute(sql) if org is None else self._reader().execute(f"{sql} WHERE org = ?", (org,))
        return {(str(o), str(g), str(w)) for o, g, w in rows}

    def last_id(self) -> int:
        """The id of the newest line stored (0 when none ever was)."""
        return self._last_id(self._reader())

    @staticmethod
    def _last_id(db: sqlite3.Connection) -> int:
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lines'").fetchone()
        return int(row[0]) if row else 0

    def scan(self, workload_id: int, start: int, end: int, backward: bool, max_id: int | None = None) -> Generator[Row]:
        """The workload's lines with ``start <= ts < end`` (and ``id <= max_id``), oldest first or
        (``backward``) newest first, ties in the order they were collected; lazily."""
        order = "DESC" if backward else "ASC"
        sql = "SELECT id, ts, stream_id, line FROM lines WHERE workload_id = ? AND ts >= ? AND ts < ?"
        args: list[int] = [workload_id, start, end]
        if max_id is not None:
            sql += " AND id <= ?"
            args.append(max_id)
        cursor = self._reader().execute(f"{sql} ORDER BY ts {order}, id {order}", args)
        try:
            while batch := cursor.fetchmany(BATCH):
                yield from batch
        finally:
            cursor.close()

    def after(self, org: str, last_id: int, limit: int = 1000) -> list[Row]:
        """Up to ``limit`` lines of ``org`` collected after ``last_id``, in that order."""
        return (
            self._reader()
            .execute(
                "SELECT l.id, l.ts, l.stream_id, l.line FROM lines l JOIN workloads w ON w.id = l.workload_id "
                "WHERE l.id > ? AND w.org = ? ORDER BY l.id LIMIT ?",
                (last_id, org, limit),
            )
            .fetchall()
        )
