"""Reading sealed watch versions in tests: the change seq behind a ``resourceVersion``.

Clients see versions as opaque strings (docs/watch.md); tests that check delivery order open
them with the store's token key, read from the store as a second replica would.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable

from plinth.engine.opaque import META_NAME, open_seq
from plinth.storage import open_storage
from tests.support.server import ServerProcess


def _database_url(server: ServerProcess) -> str | None:
    args = [str(a) for a in server.process.args]  # type: ignore[union-attr]
    return args[args.index("--database-url") + 1] if "--database-url" in args else None


def token_key_of(server: ServerProcess) -> bytes:
    """The server's token key (it exists once any cursor or watch version was made)."""

    async def read() -> bytes:
        storage = await open_storage(_database_url(server), server.data_dir)
        try:
            raw = await storage.get_meta(META_NAME)
            assert raw is not None, "the server has made no token key yet"
            return base64.b64decode(raw)
        finally:
            await storage.close()

    return asyncio.run(read())


def seq_reader(server: ServerProcess) -> Callable[[str], int]:
    """A function from a ``resourceVersion`` the server answered to its change seq."""
    key = token_key_of(server)

    def seq(version: object) -> int:
        opened = open_seq(key, str(version))
        assert opened is not None, f"{version!r} is not a version this server sealed"
        return opened

    return seq
