"""``plinth signing-key rotate``: sign new service account keys with a new key pair.

Keys signed before keep working: verification looks up the key id each key names, and every
signing key stays in the store. Every replica signs with the new key once it reads the store.
The new private key is sealed with the store's secrets key (``auth/signing.py``), found as the
server finds it (``--secrets-key-file``, ``PLINTH_SECRETS_KEY``, or a SQLite store's ``secrets.key``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from plinth.cli.store.secrets import key_file_option, store_sealer
from plinth.cli.store.transfer import store_options


@click.group("signing-key")
def signing_key_command() -> None:
    """Manage the keys that sign service account keys."""


@signing_key_command.command("rotate")
@store_options
@key_file_option
def rotate_command(database_url: str | None, data_dir: Path, secrets_key_file: Path | None) -> None:
    """Make a new signing key current; keys signed before keep working."""
    from plinth.auth.signing import rotate
    from plinth.storage import open_storage

    sealer = store_sealer(secrets_key_file, data_dir, database_url)

    async def run() -> str:
        storage = await open_storage(database_url, data_dir)
        try:
            return await rotate(storage, sealer)
        finally:
            await storage.close()

    click.echo(f"New signing key {asyncio.run(run())} is current; earlier keys still verify.")
