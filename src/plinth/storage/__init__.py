"""Storage: one protocol (``base.Storage``), two backends. ``open_storage`` picks one by URL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plinth.storage.base import Storage

if TYPE_CHECKING:
    from plinth.storage.sqlite_remote import CommitterAddress


def sqlite_path(database_url: str | None, data_dir: Path) -> Path | None:
    """The SQLite file the store is in, or ``None`` when the URL names PostgreSQL."""
    if database_url and database_url.startswith(("postgresql://", "postgres://")):
        return None
    return Path(database_url.removeprefix("sqlite:///")) if database_url else data_dir / "plinth.db"


async def open_storage(database_url: str | None, data_dir: Path, committer: CommitterAddress | None = None) -> Storage:
    """A ``postgresql://`` URL selects PostgreSQL; otherwise SQLite in ``data_dir``.

    Migrations are applied before the store is returned. ``committer``: on SQLite, the server's
    committer this worker hands its writes to (``sqlite_committer.py``), if there is one.
    """
    path = sqlite_path(database_url, data_dir)
    if path is None:
        from plinth.storage.postgres import PostgresStorage

        assert database_url is not None
        return await PostgresStorage.open(database_url)
    from plinth.files import private_dir
    from plinth.storage.sqlite import SqliteStorage

    if not database_url:
        private_dir(
            data_dir, tighten_existing=True
        )  # the data directory is Plinth's own: 0700, even one an older Plinth made 0755
    return await SqliteStorage.open(path, committer)
