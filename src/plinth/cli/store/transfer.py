"""``plinth export`` and ``plinth import``: move a whole store between machines and backends.

The file format is ``plinth.storage.transfer``'s; the stores are opened as ``plinth serve``
opens them (the same ``--data-dir`` / ``--database-url`` options and environment variables).
Nothing here speaks SQL: the backends' ``dump`` and ``load`` do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from plinth.cli.errors import CliError
from plinth.files import FILE_MODE
from plinth.storage import open_storage
from plinth.storage.base import DumpCounts, Storage, StorageError
from plinth.storage.transfer import TransferError, check_export, export_store, import_store, iter_lines, read_header

_SQLITE_FILE = "plinth.db"
F = TypeVar("F", bound=Callable[..., Any])


def store_options(function: F) -> F:
    """The store options of ``plinth serve``, with the same environment variables."""
    function = click.option("--database-url", envvar="PLINTH_DATABASE_URL", help="postgresql://... selects PostgreSQL")(
        function
    )
    return click.option(
        "--data-dir",
        envvar="PLINTH_DATA_DIR",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path(".plinth-data"),
        show_default=True,
        help="The SQLite store's directory (when no --database-url)",
    )(function)


def secrets_key_file_option(help_text: str) -> Callable[[F], F]:
    """``--secrets-key-file`` (``PLINTH_SECRETS_KEY_FILE``): the keys that seal secrets."""
    return click.option(
        "--secrets-key-file",
        envvar="PLINTH_SECRETS_KEY_FILE",
        type=click.Path(dir_okay=False, path_type=Path),
        help=help_text,
    )


def _where(data_dir: Path, database_url: str | None) -> str:
    return "the PostgreSQL database" if database_url else f"the SQLite store in {data_dir}"


def _describe(counts: DumpCounts) -> str:
    return f"{counts.records} records, {counts.refs} refs, {counts.events} events, {counts.meta} meta entries"


@click.command("export")
@store_options
@click.option("--output", "-o", default="-", show_default=True, help="The file to write, or - for standard output")
def export_command(data_dir: Path, database_url: str | None, output: str) -> None:
    """Write every record, ref, event and meta entry of a store as JSON lines."""
    if not database_url and not (data_dir / _SQLITE_FILE).exists():
        raise CliError(f"no store to export: {data_dir / _SQLITE_FILE} does not exist")
    if output == "-":
        counts = asyncio.run(_export(data_dir, database_url, sys.stdout.buffer))
    else:
        # Written beside the target and renamed into place: a failed export leaves no half file.
        target = Path(output)
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
        try:
            os.fchmod(fd, FILE_MODE)  # an export holds the store: its owner's only, whatever the umask
            with os.fdopen(fd, "wb") as out:
                counts = asyncio.run(_export(data_dir, database_url, out))
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, target)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
    click.echo(f"Exported {_describe(counts)} from {_where(data_dir, database_url)}", err=True)


async def _export(data_dir: Path, database_url: str | None, out: IO[bytes]) -> DumpCounts:
    storage = await open_store(data_dir, database_url)
    counts: DumpCounts | None = None
    try:
        async for line in export_store(storage):
            counts = counts or read_header(line)
            out.write(line)
    except StorageError as exc:
        raise CliError(f"export failed ({exc.code}): {exc}") from exc
    finally:
        await storage.close()
    assert counts is not None
    return counts


@click.command("import")
@store_options
@click.argument("file", default="-")
@click.option("--batch", type=click.IntRange(1, 100_000), default=500, show_default=True, help="Rows per transaction")
@secrets_key_file_option(
    "The secrets keys the target store's server will use (or PLINTH_SECRETS_KEY): the import "
    "refuses to start unless they hold every key the export's secrets are sealed with"
)
def import_command(
    data_dir: Path, database_url: str | None, file: str, batch: int, secrets_key_file: Path | None
) -> None:
    """Load an export FILE (- for standard input) into a new, empty store.

    Ids, versions, timestamps, events (with their order) and the server's meta entries (its
    signing keys, so existing keys keep working) are kept as they were. Secrets stay sealed as
    exported: the keys the target's server will use must hold every key id they name, which is
    checked before anything is written.
    """
    with _seekable(file) as stream:
        try:
            check_export(iter_lines(stream))
        except TransferError as exc:
            raise CliError(f"{file}: {exc}") from exc
        _check_secrets_keys(file, iter_lines(stream), data_dir, database_url, secrets_key_file)
        counts = asyncio.run(_import(data_dir, database_url, lambda: iter_lines(stream), batch))
    click.echo(f"Imported {_describe(counts)} into {_where(data_dir, database_url)}", err=True)


def _check_secrets_keys(
    file: str, lines: Iterable[bytes], data_dir: Path, database_url: str | None, key_file: Path | None
) -> None:
    """Refuse, before writing anything, an export whose sealed values the target's keys cannot open."""
    from plinth.engine.sealed import key_ids_in_export
    from plinth.sealing import KeyConfigError, open_keys

    needed = key_ids_in_export(lines)
    if not needed:
        return
    shown = ", ".join(sorted(needed))
    try:
        opened = open_keys(key_file, os.environ.get("PLINTH_SECRETS_KEY"), data_dir, bool(database_url), generate=False)
    except KeyConfigError as exc:
        raise CliError(
            f"{file}: its secrets and signing keys are sealed with key ids {shown}, and the keys given fail: {exc}"
        ) from exc
    if opened is None:
        raise CliError(
            f"{file}: its secrets and signing keys are sealed with key ids {shown}: give the key file the target's "
            "server will use (--secrets-key-file, or PLINTH_SECRETS_KEY), holding those keys; nothing was imported"
        )
    held = set(opened.source.ring().kids)
    missing = sorted(needed - held)
    if missing:
        raise CliError(
            f"{file}: its secrets and signing keys are sealed with key ids {shown}, and {opened.source.where} lacks "
            f"{', '.join(missing)}: give the target's server the exporting server's key file; nothing was imported"
        )


async def _import(
    data_dir: Path, database_url: str | None, read: Callable[[], Iterable[bytes]], batch: int
) -> DumpCounts:
    storage = await open_store(data_dir, database_url)
    try:
        return await import_store(storage, read, batch)
    except TransferError as exc:
        raise CliError(f"{_where(data_dir, database_url)}: {exc}") from exc
    except StorageError as exc:
        raise CliError(f"import failed ({exc.code}): {exc}; drop the partly loaded store before retrying") from exc
    finally:
        await storage.close()


async def open_store(data_dir: Path, database_url: str | None) -> Storage:
    try:
        return await open_storage(database_url, data_dir)
    except StorageError as exc:
        raise CliError(f"cannot open {_where(data_dir, database_url)}: {exc}") from exc


@contextlib.contextmanager
def _seekable(name: str) -> Iterator[IO[bytes]]:
    """The named file, or standard input spooled to a temporary file (it is read three times)."""
    if name == "-":
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool)
            yield spool
        return
    try:
        stream = open(name, "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise CliError(f"cannot read {name}: {exc.strerror}") from exc
    with stream:
        yield stream
