"""Helpers shared by the authorization tests: principals with keys, and reads as a principal."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from plinth.auth.signing import CURRENT, SigningKey, load_key
from plinth.sealing import Sealer, open_keys
from plinth.storage import open_storage
from tests.support.server import TEST_SECRETS_KEY, ServerProcess


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json() if response.content else None


def service_account_with_key(api: httpx.Client, org: str, name: str, **fields: Any) -> str:
    """Create ``name`` in ``org`` as the caller of ``api`` and return a new key of it."""
    ok(api.post(f"/org/{org}/serviceaccount", json={"name": name, **fields}), 201)
    minted = ok(api.post(f"/org/{org}/serviceaccount/{name}/-addKey", json={"description": f"key of {name}"}), 201)
    return str(minted["key"])


def every_item(client: httpx.Client, first: httpx.Response, headers: dict[str, str] | None = None) -> list[Any]:
    """The items of a list or query result, following ``next`` links with the same credentials."""
    page = ok(first)
    items: list[Any] = []
    while True:
        items += page["items"]
        nxt = [link["href"] for link in page["links"] if link["rel"] == "next"]
        if not nxt:
            return items
        page = ok(client.get(nxt[0], headers=headers))


def assert_forbidden(response: httpx.Response, permission: str) -> None:
    """403 that names the missing permission."""
    assert response.status_code == 403, f"{response.request.method} {response.request.url}: {response.text}"
    body = response.json()
    assert body["status"] == 403 and body["code"] == "forbidden"
    assert body["details"]["permission"] == permission, body


def assert_hidden(response: httpx.Response, kind: str, name: str) -> None:
    """The 404 a missing item answers, for one the caller may not view (docs/api.md, "Errors")."""
    assert response.status_code == 404, f"{response.request.method} {response.request.url}: {response.text}"
    body = response.json()
    assert body["code"] == "not_found" and body["details"] == {"kind": kind, "name": name}, body


def database_url_of(server: ServerProcess) -> str | None:
    """The ``--database-url`` the server was started with (``None``: SQLite in its data dir)."""
    args = [str(a) for a in server.process.args]  # type: ignore[union-attr]
    return args[args.index("--database-url") + 1] if "--database-url" in args else None


def server_signing_key(server: ServerProcess) -> SigningKey:
    """The server's current signing key, read from its store (as a second replica would: with the
    server's secrets key, which seals it)."""
    database_url = database_url_of(server)
    opened = open_keys(None, TEST_SECRETS_KEY if database_url else None, server.data_dir, False, generate=False)
    assert opened is not None, "the server has no secrets key"

    async def read() -> SigningKey:
        storage = await open_storage(database_url, server.data_dir)
        try:
            kid = await storage.get_meta(CURRENT)
            assert kid is not None, "the server has no signing key"
            key = await load_key(storage, Sealer(opened.source), kid)
            assert key is not None
            return key
        finally:
            await storage.close()

    return asyncio.run(read())
