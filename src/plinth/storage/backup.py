"""An online backup of a SQLite store: a consistent snapshot, taken while servers write to it.

SQLite's backup API (``sqlite3.Connection.backup``) copies the database page by page, a few
hundred pages a step. On its own it restarts from the first page whenever another connection
writes between two steps, so under a steady write load it might never finish. The copy is
therefore made inside one read transaction held on the source for the whole backup: in WAL
mode (Plinth's) that fixes one snapshot, the steps read that snapshot and never restart, and
writers are not blocked by it at all, since WAL readers and writers do not wait for each
other. What writers may notice is the extra I/O, and that the WAL cannot be checkpointed past
the snapshot until the backup ends (it grows meanwhile; the next checkpoint catches up);
``bench/backup.py`` measures their latency during a backup.

The snapshot holds every write committed before the backup began, and nothing half-done: a
commit is one transaction. The copy goes to a temporary file beside the output, is checked
(``PRAGMA quick_check``), switched to a rollback journal (one self-contained file), synced,
and only then renamed over the output, so ``output`` is never a partial backup.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from plinth.files import private_file

#: Pages copied per step (4 KiB pages: 1 MiB a step).
PAGES_PER_STEP = 256
BUSY_TIMEOUT_S = 10.0
#: Steps between two syncs of the copy (16 MiB of 4 KiB pages).
FLUSH_EVERY_STEPS = 16


class BackupError(Exception):
    """The backup could not be made; the output, if it existed, is unchanged."""


@dataclass(frozen=True)
class BackupDone:
    pages: int
    bytes: int
    seconds: float


def backup_sqlite(database: Path, output: Path, pages_per_step: int = PAGES_PER_STEP) -> BackupDone:
    """Copy the SQLite database at ``database`` to ``output`` (replaced atomically)."""
    if not database.is_file():
        raise BackupError(f"there is no store at {database}")
    if output.resolve() == database.resolve():
        raise BackupError("the output is the store itself: name another file")
    if not output.parent.is_dir():
        raise BackupError(f"the output's directory {output.parent} does not exist")
    partial = output.with_name(f".{output.name}.partial-{os.getpid()}")
    started = time.perf_counter()
    source = sqlite3.connect(database, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    try:
        private_file(partial)  # 0600 before SQLite writes a page into it, whatever the umask
        copy = sqlite3.connect(partial, isolation_level=None)
        flusher = _Flusher(partial)
        try:
            copy.execute("PRAGMA synchronous=OFF")  # synced here, a little at a time, then once whole
            source.execute("BEGIN")
            source.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts here
            source.backup(copy, pages=pages_per_step, progress=flusher.progress)
            source.execute("COMMIT")
            pages = int(copy.execute("PRAGMA page_count").fetchone()[0])
            copy.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal beside it
            verdict = copy.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise BackupError(f"the copy does not check out ({verdict}); the store may be damaged")
        finally:
            copy.close()
            flusher.close()
        _sync(partial)
        os.replace(partial, output)
        _sync(output.parent)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot back up {database}: {exc}") from exc
    finally:
        source.close()
        partial.unlink(missing_ok=True)
    return BackupDone(pages, output.stat().st_size, time.perf_counter() - started)


class _Flusher:
    """Writes the copy to disk every :data:`FLUSH_EVERY_STEPS` steps. Left to the end, hundreds
    of megabytes would reach the disk in one burst (at the final sync, or whenever the kernel
    decides), and the server's commits, each waiting for its own sync, would wait behind it."""

    def __init__(self, path: Path):
        self._fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o600)
        self._steps = 0

    def progress(self, status: int, remaining: int, total: int) -> None:
        self._steps += 1
        if self._steps % FLUSH_EVERY_STEPS == 0:
            os.fdatasync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
