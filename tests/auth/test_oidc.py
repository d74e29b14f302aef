"""ID token sign-in against a real OpenID Connect issuer on loopback (``tests/support/oidc_issuer.py``).

In-process: the key cache (discovery, rotation, the once-a-minute reload limit, an issuer
outage) and the verifier. Through a real server started with ``--oidc-issuer``: a good token
signs in to every org that invited its email and to no other, and every forged or unfit token
is a 401 that reads and writes nothing. The JWKS file mode runs with the issuer stopped.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from plinth.auth.jwks import JwksError, KeyCache, issuer_loader, parse_jwks
from plinth.auth.oidc import IdTokenVerifier
from plinth.auth.tokens import InvalidToken
from plinth.cli.store.serve import serve_command
from tests.aio import RunAsync
from tests.support.oidc_issuer import AUDIENCE, Issuer, rsa_key
from tests.support.server import ServerProcess, free_port, start_server

EMAIL = "ada@example.com"
#: A key the issuer never published (generated once: RSA key generation is slow).
attacker_key = functools.cache(rsa_key)


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# -- in process: keys and verification ------------------------------------------------------


def _verifier(issuer: Issuer, clock: Clock | None = None) -> IdTokenVerifier:
    keys = KeyCache(issuer_loader(issuer.url), clock=clock or Clock())
    return IdTokenVerifier(issuer.url, AUDIENCE, keys)


def test_a_valid_id_token_verifies_to_its_email_in_lowercase(issuer: Issuer, run_async: RunAsync) -> None:
    claims = run_async(_verifier(issuer).verify(issuer.mint("Ada@Example.COM")))
    assert claims.email == EMAIL and claims.expires > time.time()


def test_a_rotated_key_is_picked_up_and_reloads_are_at_most_once_a_minute(run_async: RunAsync) -> None:
    clock = Clock()
    with Issuer() as issuer:
        verifier = _verifier(issuer, clock)
        run_async(verifier.verify(issuer.mint(EMAIL)))
        assert issuer.jwks_fetches == 1
        old = issuer.current
        issuer.rotate()
        fresh = issuer.mint(EMAIL)
        clock.now += 10
        with pytest.raises(InvalidToken):  # unknown kid, but the keys were read 10 s ago
            run_async(verifier.verify(fresh))
        with pytest.raises(InvalidToken):
            run_async(verifier.verify(issuer.mint(EMAIL, kid="never-published", key=attacker_key())))
        assert issuer.jwks_fetches == 1
        clock.now += 51
        assert run_async(verifier.verify(fresh)).email == EMAIL
        assert issuer.jwks_fetches == 2
        assert run_async(verifier.verify(issuer.mint(EMAIL, kid=old))).email == EMAIL  # still published
        assert issuer.jwks_fetches == 2


def test_an_issuer_outage_keeps_the_cached_keys(run_async: RunAsync) -> None:
    clock = Clock()
    with Issuer() as issuer:
        verifier = _verifier(issuer, clock)
        token = issuer.mint(EMAIL)
        run_async(verifier.verify(token))
        issuer.failing = True
        clock.now += 120
        with pytest.raises(InvalidToken):  # a reload is attempted for the unknown kid, and fails
            run_async(verifier.verify(issuer.mint(EMAIL, kid="unknown", key=attacker_key())))
        assert run_async(verifier.verify(token)).email == EMAIL
    clock.now += 120  # the issuer is gone altogether
    assert run_async(verifier.verify(token)).email == EMAIL


def test_the_discovery_document_must_name_the_configured_issuer(issuer: Issuer, run_async: RunAsync) -> None:
    with pytest.raises(JwksError, match="does not name the issuer"):
        run_async(issuer_loader(issuer.url + "/")())


def test_a_jwks_keeps_only_asymmetric_signature_keys_with_a_kid(issuer: Issuer) -> None:
    rsa_jwk = issuer.jwks()["keys"][0]
    ec_jwk = jwt.algorithms.ECAlgorithm.to_jwk(ec.generate_private_key(ec.SECP256R1()).public_key(), as_dict=True)
    document = {
        "keys": [
            rsa_jwk,
            {**ec_jwk, "kid": "ec"},
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {**rsa_jwk, "kid": "enc", "use": "enc"},
            {k: v for k, v in rsa_jwk.items() if k != "kid"},
            {**rsa_jwk, "kid": "ps", "alg": "PS256"},
            {"kty": "RSA", "kid": "broken"},
            "not a key",
        ]
    }
    assert sorted(parse_jwks(document)) == sorted([(rsa_jwk["kid"], "RS256"), ("ec", "ES256")])
    with pytest.raises(JwksError):
        parse_jwks({"not": "a jwks"})


# -- through a real server -------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    args = ("--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE)
    proc = start_server(tmp_path_factory.mktemp("oidc"), extra_args=args)
    try:
        with proc.client() as admin:
            assert admin.post("/org/acme/user/-invite", json={"emails": [EMAIL]}).status_code == 200
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    """A client without credentials: each request brings its own token."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def _get(http: httpx.Client, token: str, path: str = "/org/acme/gvc") -> httpx.Response:
    return http.get(path, headers={"Authorization": f"Bearer {token}"})


def test_an_invited_user_signs_in_with_an_id_token(issuer: Issuer, http: httpx.Client) -> None:
    for prefix in ("Bearer ", "bearer ", ""):
        reply = http.get("/org/acme/gvc", headers={"Authorization": prefix + issuer.mint(EMAIL)})
        assert reply.status_code == 200, reply.text


def _b64(data: dict[str, Any] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _hand_made(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None = None) -> str:
    signing_input = f"{_b64(header)}.{_b64(claims)}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest() if secret else b""
    return f"{signing_input}.{_b64(signature)}"


def _tampered(issuer: Issuer) -> str:
    header, _, signature = issuer.mint("eve@example.com").split(".")
    return f"{header}.{_b64(issuer.claims(EMAIL))}.{signature}"


def _public_pem(issuer: Issuer) -> bytes:
    public = issuer.keys[issuer.current].public_key()
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _embedded_jwk(issuer: Issuer) -> str:
    attacker = attacker_key()
    jwk = jwt.algorithms.RSAAlgorithm.to_jwk(attacker.public_key(), as_dict=True)
    return jwt.encode(issuer.claims(EMAIL), attacker, algorithm="RS256", headers={"kid": issuer.current, "jwk": jwk})


def _es256_under_an_rsa_kid(issuer: Issuer) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return jwt.encode(issuer.claims(EMAIL), key, algorithm="ES256", headers={"kid": issuer.current})


NOW = int(time.time())
ATTACKS = {
    "wrong issuer": lambda i: i.mint(EMAIL, iss="https://evil.example"),
    "issuer with a trailing slash": lambda i: i.mint(EMAIL, iss=i.url + "/"),
    "wrong audience": lambda i: i.mint(EMAIL, aud="another-client"),
    "no audience": lambda i: i.mint(EMAIL, aud=None),
    "expired": lambda i: i.mint(EMAIL, iat=NOW - 7200, exp=NOW - 3600),
    "no expiry": lambda i: i.mint(EMAIL, exp=None),
    "not yet valid": lambda i: i.mint(EMAIL, nbf=NOW + 3600),
    "issued in the future": lambda i: i.mint(EMAIL, iat=NOW + 3600, exp=NOW + 7200),
    "unverified email": lambda i: i.mint(EMAIL, email_verified=False),
    "email_verified missing": lambda i: i.mint(EMAIL, email_verified=None),
    "no email": lambda i: i.mint(EMAIL, email=None),
    "email not invited": lambda i: i.mint("mallory@example.com"),
    "alg none": lambda i: _hand_made({"alg": "none", "kid": i.current}, i.claims(EMAIL)),
    "HS256 with the public key": lambda i: _hand_made(
        {"alg": "HS256", "kid": i.current}, i.claims(EMAIL), _public_pem(i)
    ),
    "a key not in the JWKS": lambda i: i.mint(EMAIL, kid="not-published", key=attacker_key()),
    "another key with the same kid": lambda i: i.mint(EMAIL, key=attacker_key()),
    "an embedded jwk header": _embedded_jwk,
    "ES256 under an RSA kid": _es256_under_an_rsa_kid,
    "no kid": lambda i: jwt.encode(i.claims(EMAIL), i.keys[i.current], algorithm="RS256"),
    "tampered payload": _tampered,
    "garbage": lambda i: "a.b.c",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_unfit_id_token_is_a_401_that_reads_and_writes_nothing(
    attack: str, issuer: Issuer, http: httpx.Client, server: ServerProcess
) -> None:
    token = ATTACKS[attack](issuer)
    assert _get(http, token).status_code == 401
    assert _get(http, token, f"/org/acme/user/{EMAIL}").status_code == 401
    name = "g" + hashlib.sha1(attack.encode()).hexdigest()[:10]
    written = http.post("/org/acme/gvc", json={"name": name}, headers={"Authorization": f"Bearer {token}"})
    assert written.status_code == 401 and written.json()["code"] == "unauthorized"
    admin_auth = {"Authorization": f"Bearer {server.key}"}
    assert http.get(f"/org/acme/gvc/{name}", headers=admin_auth).status_code == 404


def test_a_token_signs_in_to_every_org_that_invited_its_email_and_no_other(
    issuer: Issuer, server: ServerProcess, http: httpx.Client
) -> None:
    token = issuer.mint(EMAIL)
    with server.client() as admin:
        assert admin.post("/org", json={"name": "beta"}).status_code == 201
        assert _get(http, token, "/org/beta/gvc").status_code == 401
        assert admin.post("/org/beta/user/-invite", json={"emails": [EMAIL]}).status_code == 200
    assert _get(http, token, "/org/beta/gvc").status_code == 200
    assert _get(http, token, "/org/acme/gvc").status_code == 200
    assert _get(http, token, "/org").status_code == 401  # no org in the path to sign in to
    with server.client() as admin:
        assert admin.delete(f"/org/beta/user/{EMAIL}").status_code == 202
    assert _get(http, token, "/org/beta/gvc").status_code == 401  # deleted users are signed out


def test_the_jwks_file_mode_needs_no_network(tmp_path: Path) -> None:
    issuer = Issuer()
    issuer.stop()  # nothing answers at the issuer's address from here on
    jwks_file = tmp_path / "jwks.json"
    jwks_file.write_text(json.dumps(issuer.jwks()))
    args = ("--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE, "--oidc-jwks-file", str(jwks_file))
    proc = start_server(tmp_path / "data", extra_args=args)
    try:
        with proc.client() as admin:
            admin.post("/org/acme/user/-invite", json={"emails": [EMAIL]}).raise_for_status()
            assert _get(admin, issuer.mint(EMAIL)).status_code == 200
            assert _get(admin, issuer.mint(EMAIL, key=attacker_key())).status_code == 401
    finally:
        proc.stop()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--oidc-issuer", "https://idp.example"], "needs --oidc-audience"),
        (["--oidc-audience", "x"], "need --oidc-issuer"),
        (["--oidc-issuer", "http://idp.example", "--oidc-audience", "x"], "must use https"),
        (["--oidc-issuer", "idp.example", "--oidc-audience", "x"], "absolute https"),
    ],
)
def test_serve_refuses_oidc_settings_that_cannot_work(args: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(serve_command, ["--data-dir", str(tmp_path), "--port", str(free_port()), *args])
    assert result.exit_code == 2 and message in result.output


def test_serve_refuses_a_jwks_file_without_usable_keys(tmp_path: Path) -> None:
    jwks_file = tmp_path / "jwks.json"
    jwks_file.write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"}]}))
    args = ["--oidc-issuer", "https://idp.example", "--oidc-audience", "x", "--oidc-jwks-file", str(jwks_file)]
    result = CliRunner().invoke(serve_command, ["--data-dir", str(tmp_path), *args])
    assert result.exit_code == 2 and "no RS256, ES256 or EdDSA" in result.output
