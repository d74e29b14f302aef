"""The bootstrap admin key: created once, on first start with an empty store.

Until service account keys land, this key is the only credential. Only its SHA-256 is stored
(in the store's meta table, so every replica verifies it); the key itself is printed once and
written to ``<data-dir>/bootstrap-admin.key`` with mode 0600.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from plinth.auth.principal import Principal
from plinth.storage.base import SetMeta, Storage

ADMIN_HASH_META = "bootstrap.admin_key_sha256"
ADMIN_ORG_META = "bootstrap.org"
KEY_FILE = "bootstrap-admin.key"
CACHE_SIZE = 4096


def new_admin_key() -> str:
    # The official keys start with 's' and carry '.'-separated segments; keep a similar look.
    return "s" + secrets.token_hex(8)[:15] + "." + secrets.token_urlsafe(32)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class BootstrapOutcome:
    created: bool
    key: str | None
    org: str


async def claim_bootstrap(storage: Storage, org: str) -> BootstrapOutcome:
    """Record a new admin key unless one exists; only the process that wins gets the key."""
    key = new_admin_key()
    digest = _digest(key)
    await storage.commit([SetMeta(ADMIN_HASH_META, digest, only_if_absent=True)])
    if await storage.get_meta(ADMIN_HASH_META) != digest:
        return BootstrapOutcome(False, None, await storage.get_meta(ADMIN_ORG_META) or org)
    await storage.commit([SetMeta(ADMIN_ORG_META, org)])
    return BootstrapOutcome(True, key, org)


def write_key_file(data_dir: Path, key: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    os.chmod(path, 0o600)
    return path


class BootstrapAuthenticator:
    """Accepts the bootstrap admin key. Results are cached per token (hash compare once)."""

    def __init__(self, digest: str | None, org: str):
        self._digest = digest
        self._admin = Principal(org=org, kind="serviceaccount", name="admin", server_admin=True)
        self._cache: OrderedDict[str, Principal | None] = OrderedDict()

    @classmethod
    async def load(cls, storage: Storage, default_org: str) -> BootstrapAuthenticator:
        return cls(await storage.get_meta(ADMIN_HASH_META), await storage.get_meta(ADMIN_ORG_META) or default_org)

    def authenticate(self, token: str) -> Principal | None:
        cached = self._cache.get(token, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        ok = self._digest is not None and hmac.compare_digest(_digest(token), self._digest)
        principal = self._admin if ok else None
        self._cache[token] = principal
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return principal
