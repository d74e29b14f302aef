"""``plinth signing-key rotate``: sign new service account keys with a new key pair.

Keys signed before keep working: verification looks up the key id each key names, and every
signing key stays in the store. Every replica signs with the new key once it reads the store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from plinth.cli.transfer import store_options


@click.group("signing-key")
def signing_key_command() -> None:
    """Manage the keys that sign service account keys."""


@signing_key_command.command("rotate")
@store_options
def rotate_command(database_url: str | None, data_dir: Path) -> None:
    """Make a new signing key current; keys signed before keep working."""
    from plinth.auth.signing import rotate
    from plinth.storage import open_storage

    async def run() -> str:
        storage = await open_storage(database_url, data_dir)
        try:
            return await rotate(storage)
        finally:
            await storage.close()

    click.echo(f"New signing key {asyncio.run(run())} is current; earlier keys still verify.")
