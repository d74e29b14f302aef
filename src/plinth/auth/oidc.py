"""Users sign in with ID tokens from the OpenID Connect issuer the operator configured.

:class:`IdTokenVerifier` proves what an ID token says: the header names an allowed algorithm
(``auth/jwks.py``: RS256, ES256 or EdDSA; never ``none``, never HMAC) and a ``kid`` whose
JWKS key is of that algorithm; the signature checks with that key; ``iss`` is the issuer,
``aud`` contains the audience (the client id), ``exp``, ``iat`` and ``nbf`` hold (30 s of
clock skew), ``sub`` and ``email`` are present and ``email_verified`` is true. Headers that
point at other keys (``jku``, ``x5u``, ``jwk``) are ignored: keys come from the issuer only.

:class:`OidcAuthenticator` turns a verified token into a principal in the org of the request
path: the user whose name is the token's email in lowercase, ``Principal(org, "user", email)``.
Users belong to orgs by invitation, so one token signs in to every org that invited its email,
and to no other (``None``: 401). Sign-in never writes (the user's ``idp`` stays as clients set
it): authentication runs on every request, and a write there would move the access generation
and flush every replica's caches. Answers are cached per ``(token, org)`` until the token
expires or the access generation moves (a user deleted or re-invited is seen within a second).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt

from plinth.auth.generation import GenerationWatcher
from plinth.auth.jwks import ALGORITHMS, KeyCache
from plinth.auth.principal import Principal
from plinth.auth.tokens import InvalidToken
from plinth.storage.base import Key, Storage

LEEWAY_S = 30
MAX_TOKEN_CHARS = 16 * 1024
CACHE_SIZE = 10_000
REQUIRED_CLAIMS = ("iss", "aud", "exp", "iat", "sub", "email")


@dataclass(frozen=True, slots=True)
class IdClaims:
    """What a verified ID token says about its holder."""

    email: str  # lowercased
    expires: float  # the ``exp`` claim, seconds since the epoch


def _unverified(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise InvalidToken(f"not a JWT: {exc}") from exc
    return header, claims


class IdTokenVerifier:
    def __init__(self, issuer: str, audience: str, keys: KeyCache):
        self.issuer = issuer
        self.audience = audience
        self._keys = keys

    async def verify(self, token: str) -> IdClaims:
        """Check everything above; raises :class:`InvalidToken` (the reason is for logs)."""
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidToken("too long")
        header, unverified = _unverified(token)
        if unverified.get("iss") != self.issuer:
            raise InvalidToken("another issuer")  # before any key lookup: no JWKS reload for it
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALGORITHMS or not isinstance(kid, str):
            raise InvalidToken("algorithm or key id not allowed")
        key = await self._keys.key(kid, alg)
        if key is None:
            raise InvalidToken("no key of the issuer has this key id and algorithm")
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY_S,
                options={"require": list(REQUIRED_CLAIMS)},
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"rejected: {exc}") from exc
        email = claims["email"]
        if not isinstance(email, str):
            raise InvalidToken("the email claim is not a string")
        # Some issuers send the string "true"; anything else is not a verified email.
        if claims.get("email_verified") not in (True, "true"):
            raise InvalidToken("the email is not verified")
        return IdClaims(email.lower(), float(claims["exp"]))


def is_jwt(token: str) -> bool:
    """A compact JWS has three segments; a service account key has five (``tokens.py``)."""
    return token.count(".") == 2


class OidcAuthenticator:
    """ID token -> the user it signs in as in one org, or ``None``."""

    def __init__(
        self,
        storage: Storage,
        watcher: GenerationWatcher,
        verifier: IdTokenVerifier,
        clock: Callable[[], float] = time.time,
    ):
        self._storage = storage
        self._watcher = watcher
        self._verifier = verifier
        self._clock = clock
        self._generation: str | None = None
        self._signed_in: OrderedDict[tuple[str, str], tuple[Principal, float]] = OrderedDict()

    async def authenticate(self, token: str, org: str | None) -> Principal | None:
        """The user of ``org`` the token signs in as; ``None`` without an org in the path."""
        if org is None:
            return None
        generation = await self._watcher.current()
        if generation != self._generation:
            self._signed_in.clear()
            self._generation = generation
        cached = self._signed_in.get((token, org))
        if cached is not None:
            if self._clock() < cached[1]:
                return cached[0]
            del self._signed_in[(token, org)]
        try:
            claims = await self._verifier.verify(token)
        except InvalidToken:
            return None  # failures are not cached: an unknown key may be known after a reload
        if await self._storage.get(Key(org, "user", "", claims.email)) is None:
            return None
        principal = Principal(org, "user", claims.email)
        self._signed_in[(token, org)] = (principal, claims.expires)
        if len(self._signed_in) > CACHE_SIZE:
            self._signed_in.popitem(last=False)
        return principal
