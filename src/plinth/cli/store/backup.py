"""``plinth backup``: an online backup of a SQLite store, while its server keeps serving.

The copy is SQLite's own online backup of one consistent snapshot (``storage/backup.py``), never
a file copy (which, under writes, can capture a torn database). Restoring is starting a server
on the file: ``plinth serve --database-url sqlite:///path/to/backup.db``, or copying it to
``plinth.db`` in a new data directory (docs/operations.md). A PostgreSQL store is backed up
with PostgreSQL's tools (``pg_dump``), as docs/operations.md describes; this command says so.
"""

from __future__ import annotations

from pathlib import Path

import click

from plinth.cli.errors import CliError
from plinth.cli.store.transfer import store_options
from plinth.storage.backup import BackupError, backup_sqlite

_SQLITE_FILE = "plinth.db"
POSTGRES = (
    "plinth backup copies a SQLite store. Back up a PostgreSQL store with pg_dump (the signing keys are in the "
    "database, sealed with the secrets key: keep the secrets key file too, apart from the dumps): see "
    "docs/operations.md"
)


def _database(data_dir: Path, database_url: str | None) -> Path:
    if not database_url:
        return data_dir / _SQLITE_FILE
    if database_url.startswith(("postgresql://", "postgres://")):
        raise CliError(POSTGRES)
    return Path(database_url.removeprefix("sqlite:///"))


@click.command("backup")
@store_options
@click.option(
    "--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The file to write"
)
def backup_command(data_dir: Path, database_url: str | None, output: Path) -> None:
    """Copy a consistent snapshot of a SQLite store while its server keeps serving."""
    database = _database(data_dir, database_url)
    try:
        done = backup_sqlite(database, output)
    except BackupError as exc:
        raise CliError(f"plinth: {exc}", blank_line=False) from exc
    click.echo(
        f"Backed up {database} to {output}: {done.bytes / 1e6:.1f} MB, a snapshot of the store as it was when the "
        f"backup began ({done.seconds:.2f} s)"
    )
    key_file = database.parent / "secrets.key"
    where = key_file if not database_url and key_file.exists() else "your --secrets-key-file or PLINTH_SECRETS_KEY"
    click.echo(
        f"Secrets and signing keys in it are sealed with the keys in {where}, which the backup does not hold: keep a "
        "copy of them, apart from the backup"
    )
