"""Service account keys: EdDSA JWTs signed by the server, in the official key layout.

A key reads ``<name>.<b64url("<org>.<serviceaccount>.<kid>")>.<JWT>``: the official CLI takes the
first segment (16 characters) as the key's name and decodes the second to show who the key acts
as; the JWT (``header.payload.signature``) carries the same facts, signed. Verification pins the
algorithm (EdDSA) and the key id, checks the signature, the issuer, the claims, an ``exp`` when
present, and that the readable prefix agrees with the signed claims. Revocation is checked by
the caller (the key name must still be listed on its service account).
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from plinth.auth.signing import SigningKey

ISSUER = "plinth"
ALGORITHM = "EdDSA"
KEY_NAME_LENGTH = 16


class InvalidToken(Exception):
    """The credential is not a valid key; the reason is for logs, never for the client."""


@dataclass(frozen=True, slots=True)
class KeyClaims:
    org: str
    serviceaccount: str
    key_name: str
    kid: str


def new_key_name() -> str:
    return "s" + secrets.token_hex(8)[: KEY_NAME_LENGTH - 1]


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def mint(signing: SigningKey, org: str, serviceaccount: str, key_name: str, expires_in: int | None = None) -> str:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": f"/org/{org}/serviceaccount/{serviceaccount}",
        "org": org,
        "sa": serviceaccount,
        "jti": key_name,
        "iat": now,
    }
    if expires_in is not None:
        claims["exp"] = now + expires_in
    token = jwt.encode(claims, signing.private, algorithm=ALGORITHM, headers={"kid": signing.kid})
    return f"{key_name}.{_b64(f'{org}.{serviceaccount}.{signing.kid}')}.{token}"


async def verify(token: str, public_key: Callable[[str], Awaitable[Ed25519PublicKey | None]]) -> KeyClaims:
    """Check everything a key can prove about itself; raises :class:`InvalidToken`."""
    parts = token.split(".")
    if len(parts) != 5 or len(parts[0]) != KEY_NAME_LENGTH:
        raise InvalidToken("not a key of this server")
    name, readable, compact = parts[0], parts[1], ".".join(parts[2:])
    try:
        header = jwt.get_unverified_header(compact)
    except jwt.PyJWTError as exc:
        raise InvalidToken(f"bad header: {exc}") from exc
    if header.get("alg") != ALGORITHM or not isinstance(header.get("kid"), str):
        raise InvalidToken("algorithm or key id not allowed")
    key = await public_key(header["kid"])
    if key is None:
        raise InvalidToken("unknown key id")
    try:
        claims = jwt.decode(
            compact,
            key,
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            options={"require": ["iss", "sub", "org", "sa", "jti", "iat"]},
        )
    except jwt.PyJWTError as exc:
        raise InvalidToken(f"rejected: {exc}") from exc
    try:
        readable_text = _unb64(readable)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidToken("bad readable segment") from exc
    if (
        claims["jti"] != name
        or readable_text != f"{claims['org']}.{claims['sa']}.{header['kid']}"
        or claims["sub"] != f"/org/{claims['org']}/serviceaccount/{claims['sa']}"
    ):
        raise InvalidToken("the readable prefix does not match the signed claims")
    return KeyClaims(claims["org"], claims["sa"], name, header["kid"])
