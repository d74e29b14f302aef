"""Files only their owner may read: the data directory (0700) and everything Plinth writes in it
or for it (0600), whatever the umask.

Modes are set explicitly (``fchmod``/``chmod``), never left to the umask: a permissive umask
(``0o000``) must not make a store, a key or a backup readable by other local users, and a file
created by an older Plinth with a looser mode is tightened when Plinth opens it again. Imports
nothing of Plinth, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
#: Files beside a SQLite database that hold its data or lock it (SQLite gives ``-wal``/``-shm``
#: the database file's own mode; the others are Plinth's).
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal", "-changes", ".migrate-lock")


def private_dir(path: Path, *, tighten_existing: bool) -> Path:
    """Create ``path`` (and its parents) if missing; the directory itself is made 0700 when this
    call creates it, or, with ``tighten_existing`` (a directory that is Plinth's own: the data
    directory), when it exists, belongs to this user, is not sticky (a shared directory like
    ``/tmp``) and is looser than that (a data directory made by an older Plinth)."""
    created = not path.exists()
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    st = path.stat()
    loose = st.st_uid == os.getuid() and not st.st_mode & stat.S_ISVTX and st.st_mode & 0o077
    if created or (tighten_existing and loose):
        os.chmod(path, DIR_MODE)
    return path


def tighten(path: Path) -> None:
    """Make an existing file 0600 (nothing when it is missing or not ours to change)."""
    with contextlib.suppress(FileNotFoundError, PermissionError):
        if stat.S_IMODE(path.stat().st_mode) != FILE_MODE:
            os.chmod(path, FILE_MODE)


def private_file(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 if it does not exist (so a program that opens it next,
    like SQLite, finds it private from its first byte), and make an existing one 0600."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        tighten(path)
        return path
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def private_sqlite(database: Path) -> None:
    """The database file 0600 (created empty when missing: SQLite takes an empty file as a new
    database) and every companion file that exists already 0600."""
    private_file(database)
    for suffix in SQLITE_COMPANIONS:
        tighten(database.with_name(database.name + suffix))
