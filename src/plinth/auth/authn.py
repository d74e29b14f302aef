"""Authentication: a service account key -> the principal it acts as, or ``None``.

Verification (``tokens.verify``) proves what the key says about itself; this module adds what
only the store knows: the service account still exists and still lists the key (revocation).
Answers are cached per token until the access generation moves (``generation.py``), so a GET
pays for one dictionary lookup, and a revocation holds everywhere within a second; a key with
an ``exp`` is cached no longer than it is valid.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from plinth.auth.generation import GenerationWatcher
from plinth.auth.principal import Principal
from plinth.auth.signing import load_public
from plinth.auth.tokens import InvalidToken, verify
from plinth.storage.base import Key, Storage

#: The link of the service account holding the server-admin right (the bootstrap admin).
SERVER_ADMIN_META = "bootstrap.server_admin"
CACHE_SIZE = 10_000
_MISSING = object()


class KeyAuthenticator:
    def __init__(self, storage: Storage, watcher: GenerationWatcher):
        self._storage = storage
        self._watcher = watcher
        self._generation: str | None = None
        #: token -> (principal or None, when the answer stops holding: the key's exp, or None)
        self._tokens: OrderedDict[str, tuple[Principal | None, float | None]] = OrderedDict()
        self._public_keys: dict[str, Ed25519PublicKey] = {}
        self._server_admin: str | object | None = _MISSING

    async def authenticate(self, token: str) -> Principal | None:
        generation = await self._watcher.current()
        if generation != self._generation:
            self._tokens.clear()
            self._server_admin = _MISSING
            self._generation = generation
        cached = self._tokens.get(token)
        if cached is not None and (cached[1] is None or time.time() < cached[1]):
            return cached[0]
        principal, expires = await self._verify(token)
        self._tokens[token] = (principal, expires)
        if len(self._tokens) > CACHE_SIZE:
            self._tokens.popitem(last=False)
        return principal

    async def _public_key(self, kid: str) -> Ed25519PublicKey | None:
        key = self._public_keys.get(kid)
        if key is None:
            public = await load_public(self._storage, kid)
            if public is None:
                return None
            key = self._public_keys[kid] = public
        return key

    async def _verify(self, token: str) -> tuple[Principal | None, float | None]:
        """The principal (``None``: refused) and until when that answer holds (``None``: until
        the access generation moves)."""
        try:
            claims = await verify(token, self._public_key)
        except InvalidToken:
            return None, None
        # Fresh: a revoked key must not live on in a read cache (this runs once per token and generation).
        record = await self._storage.get(Key(claims.org, "serviceaccount", "", claims.serviceaccount), fresh=True)
        if record is None:
            return None, None
        names = {k.get("name") for k in orjson.loads(record.doc).get("keys", [])}
        if claims.key_name not in names:
            return None, None
        if self._server_admin is _MISSING:
            self._server_admin = await self._storage.get_meta(SERVER_ADMIN_META)
        link = f"/org/{claims.org}/serviceaccount/{claims.serviceaccount}"
        principal = Principal(
            claims.org, "serviceaccount", claims.serviceaccount, server_admin=link == self._server_admin
        )
        return principal, claims.expires
