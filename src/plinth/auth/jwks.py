"""The signing keys of an OpenID Connect issuer: loaded, cached, refreshed on demand.

Keys come either from the issuer (``{issuer}/.well-known/openid-configuration`` names the
``jwks_uri``, which serves the JWKS) or from a JWKS file, for set-ups without a network path to
the issuer. :class:`KeyCache` holds them by ``(kid, alg)`` and reloads when asked for a key it
does not hold (the issuer rotated its keys), at most once per ``interval`` (60 s): a flood of
tokens naming unknown keys costs the issuer one request a minute. A load that fails leaves the
cached keys in place, so an issuer outage does not sign anyone out.

Only asymmetric signature keys of the algorithms in :data:`ALGORITHMS` are kept: a key for
encryption, an HMAC (``oct``) key, a key without a ``kid`` or one PyJWT cannot read is skipped.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from jwt import PyJWK
from jwt.exceptions import PyJWTError

log = logging.getLogger("plinth.auth")

#: The signature algorithms an ID token may use; never ``none``, never HMAC.
ALGORITHMS = frozenset({"RS256", "ES256", "EdDSA"})
REFRESH_INTERVAL_S = 60.0
FETCH_TIMEOUT_S = 5.0
MAX_DOCUMENT_BYTES = 1024 * 1024
DISCOVERY_PATH = "/.well-known/openid-configuration"

Keys = dict[tuple[str, str], PyJWK]
Loader = Callable[[], Awaitable[Keys]]


class JwksError(Exception):
    """A discovery document or JWKS that cannot be used."""


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot serve keys, or ``None``: HTTPS, or plain HTTP on a loopback host only
    (a key fetched in clear text could be replaced on the way, and with it every identity)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if loopback:
            return None
        return "must use https (plain http is accepted on loopback hosts only)"
    return "must be an absolute https:// URL"


def parse_jwks(document: Any) -> Keys:
    """The usable signature keys of a JWKS document, by ``(kid, alg)``; raises :class:`JwksError`
    when the document is not a JWKS."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise JwksError('not a JWKS: expected {"keys": [...]}')
    keys: Keys = {}
    for jwk in document["keys"]:
        if not isinstance(jwk, dict) or not isinstance(jwk.get("kid"), str) or jwk.get("use", "sig") != "sig":
            continue
        try:
            key = PyJWK(jwk)
        except (PyJWTError, ValueError, TypeError, KeyError) as exc:
            log.warning("skipping JWKS key %r: %s", jwk.get("kid"), exc)
            continue
        if key.algorithm_name in ALGORITHMS:
            keys[(jwk["kid"], key.algorithm_name)] = key
    return keys


def discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + DISCOVERY_PATH


async def _get_json(client: httpx.AsyncClient, url: str) -> Any:
    response = await client.get(url, headers={"accept": "application/json"})
    if response.status_code != 200:
        raise JwksError(f"{url} answered {response.status_code}")
    if len(response.content) > MAX_DOCUMENT_BYTES:
        raise JwksError(f"{url} answered more than {MAX_DOCUMENT_BYTES} bytes")
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise JwksError(f"{url} did not answer JSON: {exc}") from exc


def issuer_loader(issuer: str, timeout: float = FETCH_TIMEOUT_S) -> Loader:
    """Load the keys through the issuer's discovery document (OpenID Connect Discovery 1.0):
    its ``issuer`` must be ours, its ``jwks_uri`` must pass :func:`url_problem`."""

    async def load() -> Keys:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            config = await _get_json(client, discovery_url(issuer))
            if not isinstance(config, dict) or config.get("issuer") != issuer:
                raise JwksError(f"the discovery document does not name the issuer {issuer!r}")
            jwks_uri = config.get("jwks_uri")
            if not isinstance(jwks_uri, str) or url_problem(jwks_uri) is not None:
                raise JwksError(f"the discovery document's jwks_uri {jwks_uri!r} is not usable")
            return parse_jwks(await _get_json(client, jwks_uri))

    return load


def file_loader(path: Path) -> Loader:
    """Load the keys from a JWKS file (read again when a token names a key it lacks)."""

    async def load() -> Keys:
        try:
            return parse_jwks(orjson.loads(path.read_bytes()))
        except (OSError, orjson.JSONDecodeError) as exc:
            raise JwksError(f"cannot read the JWKS file {path}: {exc}") from exc

    return load


class KeyCache:
    """The issuer's keys, loaded on first use and again for an unknown key, at most once per
    ``interval`` seconds. Safe for concurrent requests: one load runs at a time."""

    def __init__(
        self,
        load: Loader,
        interval: float = REFRESH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._load = load
        self._interval = interval
        self._clock = clock
        self._keys: Keys = {}
        self._loaded_at: float | None = None
        self._lock = asyncio.Lock()

    async def key(self, kid: str, alg: str) -> PyJWK | None:
        """The key ``kid`` for algorithm ``alg``, reloading once if it is not held."""
        key = self._keys.get((kid, alg))
        if key is None:
            await self._refresh()
            key = self._keys.get((kid, alg))
        return key

    async def _refresh(self) -> None:
        async with self._lock:
            now = self._clock()
            if self._loaded_at is not None and now - self._loaded_at < self._interval:
                return
            self._loaded_at = now
            try:
                self._keys = await self._load()
            except (JwksError, httpx.HTTPError, OSError) as exc:
                log.warning("OIDC keys not refreshed, keeping %d cached: %s", len(self._keys), exc)
