"""Service account keys: what verification accepts, and every forgery it must refuse."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from plinth.auth.signing import SigningKey
from plinth.auth.tokens import InvalidToken, mint, new_key_name, verify


def _signing(kid: str = "k1") -> SigningKey:
    private = Ed25519PrivateKey.generate()
    return SigningKey(kid, private, private.public_key())


SIGNER = _signing()


async def _lookup(kid: str) -> Ed25519PublicKey | None:
    return SIGNER.public if kid == SIGNER.kid else None


def _verify(token: str):  # type: ignore[no-untyped-def]
    return asyncio.run(verify(token, _lookup))


def _b64(data: dict[str, object] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_a_minted_key_verifies_and_says_who_it_is() -> None:
    name = new_key_name()
    token = mint(SIGNER, "acme", "ci-bot", name)
    claims = _verify(token)
    assert (claims.org, claims.serviceaccount, claims.key_name, claims.kid) == ("acme", "ci-bot", name, "k1")
    assert token.split(".")[0] == name and len(name) == 16
    readable = base64.urlsafe_b64decode(token.split(".")[1] + "==").decode()
    assert readable == "acme.ci-bot.k1"


def _forge(header: dict[str, object], payload: dict[str, object], signature: bytes = b"") -> str:
    return f"{new_key_name()}.{_b64(b'acme.admin.k1')}.{_b64(header)}.{_b64(payload)}.{_b64(signature)}"


PAYLOAD = {"iss": "plinth", "sub": "/org/acme/serviceaccount/admin", "org": "acme", "sa": "admin", "jti": "x", "iat": 1}


def test_alg_none_is_refused() -> None:
    with pytest.raises(InvalidToken):
        _verify(_forge({"alg": "none", "kid": "k1"}, PAYLOAD))


def test_hs256_signed_with_the_public_key_is_refused() -> None:
    public_pem = SIGNER.public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    name = new_key_name()
    payload = {**PAYLOAD, "jti": name}
    # Hand-made: PyJWT itself refuses to HMAC-sign with a PEM public key.
    compact = _hs256(payload, public_pem)
    with pytest.raises(InvalidToken):
        _verify(f"{name}.{_b64(b'acme.admin.k1')}.{compact}")


def _hs256(payload: dict[str, object], secret: bytes) -> str:
    import hashlib
    import hmac

    signing_input = f"{_b64({'alg': 'HS256', 'kid': 'k1', 'typ': 'JWT'})}.{_b64(payload)}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def test_a_tampered_payload_is_refused() -> None:
    token = mint(SIGNER, "acme", "bot", new_key_name())
    parts = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(parts[3] + "=="))
    payload["sa"] = "admin"
    payload["sub"] = "/org/acme/serviceaccount/admin"
    parts[3] = _b64(payload)
    parts[1] = _b64(b"acme.admin.k1")
    with pytest.raises(InvalidToken):
        _verify(".".join(parts))


def test_an_unknown_key_id_is_refused() -> None:
    other = _signing("k2")
    with pytest.raises(InvalidToken):
        _verify(mint(other, "acme", "bot", new_key_name()))


def test_a_key_signed_by_another_server_is_refused() -> None:
    impostor = _signing("k1")  # same kid, different key
    with pytest.raises(InvalidToken):
        _verify(mint(impostor, "acme", "bot", new_key_name()))


def test_an_expired_key_is_refused() -> None:
    with pytest.raises(InvalidToken):
        _verify(mint(SIGNER, "acme", "bot", new_key_name(), expires_in=-10))


def test_a_readable_prefix_that_lies_is_refused() -> None:
    token = mint(SIGNER, "acme", "bot", new_key_name())
    parts = token.split(".")
    parts[1] = _b64(b"acme.admin.k1")
    with pytest.raises(InvalidToken):
        _verify(".".join(parts))
    parts = token.split(".")
    parts[0] = new_key_name()
    with pytest.raises(InvalidToken):
        _verify(".".join(parts))


@pytest.mark.parametrize("garbage", ["", "x", "a.b.c", "s" * 16 + ".x.y.z.w", "💥" * 20, ".....", "Bearer x"])
def test_garbage_is_refused(garbage: str) -> None:
    with pytest.raises(InvalidToken):
        _verify(garbage)
