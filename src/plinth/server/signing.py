"""The key that signs new service account keys, read from the store and cached per process."""

from __future__ import annotations

from plinth.auth.signing import CURRENT, SigningKey, SigningKeyError, ensure_signing_key, load_key
from plinth.errors import ServiceUnavailable
from plinth.sealing import Sealer
from plinth.storage.base import Storage


class SigningCache:
    def __init__(self, storage: Storage, sealer: Sealer | None):
        self._storage = storage
        self._sealer = sealer
        self._key: SigningKey | None = None

    async def current(self) -> SigningKey:
        """The current signing key; re-read when another replica rotated it."""
        kid = await self._storage.get_meta(CURRENT) or await ensure_signing_key(self._storage, self._sealer)
        if self._key is None or self._key.kid != kid:
            try:
                key = await load_key(self._storage, self._sealer, kid)
            except SigningKeyError as exc:  # checked at start; a key file changed since
                raise ServiceUnavailable(str(exc)) from exc
            assert key is not None, f"signing key {kid} is named current but missing"
            self._key = key
        return self._key
