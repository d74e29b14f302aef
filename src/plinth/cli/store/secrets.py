"""``plinth secrets``: the keys that seal secrets at rest (``plinth.sealing``).

- ``rotate-key`` adds a new key to the key file (the newest seals; every key still opens) and,
  unless ``--no-reseal``, seals every stored value again with it (``reseal``);
- ``reseal`` seals every value not sealed with the newest key again with it, a page per
  transaction, each record keeping its version (servers may keep serving meanwhile);
- ``status`` counts the stored values by the key id that sealed them, and says which keys the
  key source lacks and which ones nothing uses any more (and may be removed).

The commands open the store as ``plinth serve`` does (``--data-dir`` / ``--database-url``) and
the keys from the same place (``--secrets-key-file``, ``PLINTH_SECRETS_KEY``, or a SQLite
store's ``secrets.key``). docs/api.md ("Secrets at rest") has the operator's steps.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from plinth.cli.errors import CliError
from plinth.cli.store.transfer import secrets_key_file_option, store_options

key_file_option = secrets_key_file_option("The key file the servers use (default on SQLite: secrets.key in --data-dir)")


@click.group("secrets")
def secrets_command() -> None:
    """Manage the keys that seal secrets at rest."""


def _key_file(secrets_key_file: Path | None, data_dir: Path, database_url: str | None) -> Path:
    """The key file a rotation adds to: the one given, or a SQLite store's own."""
    if secrets_key_file is not None:
        return secrets_key_file
    if os.environ.get("PLINTH_SECRETS_KEY"):
        raise CliError(
            "rotation adds a key to a key file, and this server's key is PLINTH_SECRETS_KEY: write that key "
            "(one line) into a file, then pass it as --secrets-key-file here and to every server"
        )
    if database_url:
        raise CliError("give the key file every server of this PostgreSQL store uses: --secrets-key-file")
    from plinth.sealing.keys import default_key_file

    return default_key_file(data_dir)


def store_sealer(secrets_key_file: Path | None, data_dir: Path, database_url: str | None) -> Any:
    """The sealer of a store's secrets keys, found as the server finds them; a ``CliError`` without."""
    from plinth.sealing import KeyConfigError, Sealer, open_keys

    try:
        opened = open_keys(
            secrets_key_file, os.environ.get("PLINTH_SECRETS_KEY"), data_dir, bool(database_url), generate=False
        )
    except KeyConfigError as exc:
        raise CliError(str(exc)) from exc
    if opened is None:
        raise CliError("no secrets key: give --secrets-key-file or PLINTH_SECRETS_KEY (the servers' own)")
    return Sealer(opened.source)


async def _with_store(data_dir: Path, database_url: str | None, work: Callable[[Any], Any]) -> Any:
    from plinth.cli.store.transfer import open_store

    storage = await open_store(data_dir, database_url)
    try:
        return await work(storage)
    finally:
        await storage.close()


def _usage(data_dir: Path, database_url: str | None) -> tuple[Counter[str], Counter[str]]:
    """Stored values, and the server's signing keys, by the key id that sealed them."""
    from plinth.engine.sealed import key_usage, signing_key_usage
    from plinth.kinds import REGISTRY

    async def both(storage: Any) -> tuple[Counter[str], Counter[str]]:
        return await key_usage(storage, REGISTRY), await signing_key_usage(storage)

    result: tuple[Counter[str], Counter[str]] = asyncio.run(_with_store(data_dir, database_url, both))
    return result


def _reseal(sealer: Any, data_dir: Path, database_url: str | None) -> None:
    from plinth.engine.sealed import reseal
    from plinth.kinds import REGISTRY
    from plinth.sealing import SealingError

    try:
        report = asyncio.run(_with_store(data_dir, database_url, lambda s: reseal(s, REGISTRY, sealer)))
    except SealingError as exc:
        raise CliError(f"cannot reseal: {exc}; the values before it are sealed with the newest key") from exc
    click.echo(
        f"Sealed {report.resealed} values again with key {sealer.newest_kid} "
        f"({report.already} were sealed with it already)"
        + (f", and {report.signing_keys} signing key(s) of the server." if report.signing_keys else ".")
    )
    values, signing_keys = _usage(data_dir, database_url)
    left = {kid: n for kid, n in (values + signing_keys).items() if kid != sealer.newest_kid}
    if left:
        shown = ", ".join(f"{kid}: {n}" for kid, n in sorted(left.items()))
        click.echo(
            f"Still sealed with older keys ({shown}): a server that has not read the new key yet wrote them. "
            "Once every server has it, run `plinth secrets reseal` again."
        )
    else:
        click.echo("Nothing is sealed with an older key: after every server has read the key file, "
                   "older keys may be removed from it (`plinth secrets status` says which).")  # fmt: skip


@secrets_command.command("rotate-key")
@store_options
@key_file_option
@click.option(
    "--reseal/--no-reseal",
    default=True,
    show_default=True,
    help="Seal every stored value with the new key now; --no-reseal only adds the key (replicas on "
    "several machines: give each the new file, then run `plinth secrets reseal`)",
)
def rotate_key_command(data_dir: Path, database_url: str | None, secrets_key_file: Path | None, reseal: bool) -> None:
    """Add a new key to the key file (it seals from now on; older keys still open), then reseal."""
    from plinth.sealing import FileKeys, KeyConfigError, Sealer, generate_key
    from plinth.sealing.keys import read_key_file, write_key_file

    path = _key_file(secrets_key_file, data_dir, database_url)
    try:
        ring = read_key_file(path)
    except KeyConfigError as exc:
        raise CliError(str(exc)) from exc
    new = generate_key()
    write_key_file(path, [*ring.keys, new])
    click.echo(
        f"Added key {new.kid} to {path}: it seals new values from now on (a server reading this file takes "
        f"it within a second); keys {', '.join(ring.kids)} still open what they sealed."
    )
    if reseal:
        _reseal(Sealer(FileKeys(path)), data_dir, database_url)


@secrets_command.command("reseal")
@store_options
@key_file_option
def reseal_command(data_dir: Path, database_url: str | None, secrets_key_file: Path | None) -> None:
    """Seal every stored value not sealed with the newest key again with it."""
    _reseal(store_sealer(secrets_key_file, data_dir, database_url), data_dir, database_url)


@secrets_command.command("status")
@store_options
@key_file_option
def status_command(data_dir: Path, database_url: str | None, secrets_key_file: Path | None) -> None:
    """How many stored values each key sealed; keys missing from the key source, keys unused."""
    sealer = store_sealer(secrets_key_file, data_dir, database_url)
    values, signing_keys = _usage(data_dir, database_url)
    usage = values + signing_keys
    ring = sealer.source.ring()
    lines = [f"Key source: {sealer.source.where}"]

    def signing_of(kid: str) -> str:
        return f", {signing_keys[kid]} signing key(s)" if signing_keys.get(kid) else ""

    for kid in ring.kids:
        marks = " (newest: seals new values)" if kid == ring.newest.kid else ""
        lines.append(f"  {kid}: {values.get(kid, 0)} values{marks}{signing_of(kid)}")
    missing = sorted(kid for kid in usage if kid not in ring.kids)
    for kid in missing:
        also = f" It seals {signing_keys[kid]} signing key(s) too." if signing_keys.get(kid) else ""
        lines.append(f"  {kid}: {values.get(kid, 0)} values, and the key source does not hold this key!{also}")
    unused = [kid for kid in ring.kids if kid != ring.newest.kid and not usage.get(kid)]
    if unused:
        lines.append(f"Unused, may be removed once every server has read the newest key: {', '.join(unused)}")
    click.echo("\n".join(lines))
    if missing:
        raise CliError(f"values sealed with {', '.join(missing)} cannot be opened with these keys")
