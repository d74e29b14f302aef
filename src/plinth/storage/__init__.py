"""Storage: one protocol (``base.Storage``), two backends. ``open_storage`` picks one by URL."""

from __future__ import annotations

from pathlib import Path

from plinth.storage.base import Storage


async def open_storage(database_url: str | None, data_dir: Path) -> Storage:
    """A ``postgresql://`` URL selects PostgreSQL; otherwise SQLite in ``data_dir``.

    Migrations are applied before the store is returned.
    """
    if database_url and database_url.startswith(("postgresql://", "postgres://")):
        from plinth.storage.postgres import PostgresStorage

        return await PostgresStorage.open(database_url)
    from plinth.files import private_dir
    from plinth.storage.sqlite import SqliteStorage

    if not database_url:
        private_dir(
            data_dir, tighten_existing=True
        )  # the data directory is Plinth's own: 0700, even one an older Plinth made 0755
    path = Path(database_url.removeprefix("sqlite:///")) if database_url else data_dir / "plinth.db"
    return await SqliteStorage.open(path)
