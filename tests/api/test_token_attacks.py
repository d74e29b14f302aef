"""Forged, stale and foreign credentials (issue 3), through real HTTP on both backends.

Each attack token goes through the same probes: read an item, list, query, read a missing item,
create, patch, delete, add a key to the bootstrap admin. Every probe must answer 401 and show
no item data, and afterwards the store (read as the bootstrap admin) holds exactly what it held.
Where an attack starts from a key that worked (revoked, deleted account, another org), the test
first shows that it worked, so the 401 is the revocation and not some other failure.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from plinth.auth.signing import SigningKey
from plinth.auth.tokens import mint, new_key_name
from tests.api.authz_support import bearer, ok, server_signing_key, service_account_with_key
from tests.support.server import ServerProcess

ORG = "acme"
SENTINEL = "sentinel"
MARKER = "m4rker-only-an-authorized-read-shows"


@dataclass
class Forge:
    server: ServerProcess
    admin: httpx.Client
    anonymous: httpx.Client
    signing: SigningKey
    admin_key_name: str
    _beta: str | None = None

    def beta_key(self) -> str:
        """A key of org beta (made once), able to manage beta: in acme it proves nothing."""
        if self._beta is None:
            ok(self.admin.post("/org", json={"name": "beta"}), 201)
            token = service_account_with_key(self.admin, "beta", "beta-robot")
            members = {"$append/memberLinks": ["//serviceaccount/beta-robot"]}
            ok(self.admin.patch("/org/beta/group/superusers", json=members))
            ok(self.admin.post("/org/beta/gvc", json={"name": SENTINEL, "tags": {"marker": "beta"}}), 201)
            _works(self, token, f"/org/beta/gvc/{SENTINEL}")
            self._beta = token
        return self._beta

    def snapshot(self) -> dict[str, Any]:
        """What the probes could have changed, as the bootstrap admin sees it."""
        gvcs = ok(self.admin.get(f"/org/{ORG}/gvc"))["items"]
        admin_sa = ok(self.admin.get(f"/org/{ORG}/serviceaccount/admin"))
        events = ok(self.admin.get(f"/org/{ORG}/gvc/{SENTINEL}/-eventlog"))["items"]
        return {
            "gvcs": sorted((g["name"], g["version"], g["description"]) for g in gvcs),
            "admin_keys": admin_sa["keys"],
            "sentinel_events": len(events),
        }


@pytest.fixture(scope="module")
def forge(server: ServerProcess, api: httpx.Client) -> Iterator[Forge]:
    ok(api.post(f"/org/{ORG}/gvc", json={"name": SENTINEL, "tags": {"marker": MARKER}}), 201)
    with httpx.Client(base_url=server.url, timeout=30) as anonymous:
        yield Forge(server, api, anonymous, server_signing_key(server), server.key.split(".")[0])


def _b64(data: bytes | dict[str, Any]) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def _admin_claims(f: Forge) -> dict[str, Any]:
    """The claims of a key for the bootstrap admin, naming a key the admin really holds."""
    import time

    return {
        "iss": "plinth",
        "sub": f"/org/{ORG}/serviceaccount/admin",
        "org": ORG,
        "sa": "admin",
        "jti": f.admin_key_name,
        "iat": int(time.time()),
    }


def _prefix(f: Forge, kid: str) -> str:
    return f"{f.admin_key_name}.{_b64(f'{ORG}.admin.{kid}'.encode())}"


def _hand_signed(f: Forge, header: dict[str, Any], sign: Callable[[bytes], bytes]) -> str:
    signing_input = f"{_b64(header)}.{_b64(_admin_claims(f))}"
    return f"{_prefix(f, str(header.get('kid')))}.{signing_input}.{_b64(sign(signing_input.encode()))}"


# -- the attacks: each returns the token to probe with ----------------------------------------


def alg_none(f: Forge) -> str:
    return _hand_signed(f, {"alg": "none", "typ": "JWT", "kid": f.signing.kid}, lambda _: b"")


def hs256_with_public_key(f: Forge) -> str:
    """The classic confusion: HMAC keyed with the server's public key, which anyone can read."""
    public_pem = f.signing.public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"alg": "HS256", "typ": "JWT", "kid": f.signing.kid}
    return _hand_signed(f, header, lambda data: hmac.new(public_pem, data, hashlib.sha256).digest())


def tampered_payload(f: Forge) -> str:
    """A real key of a powerless account, its signed claims rewritten to name the admin."""
    weak = service_account_with_key(f.admin, ORG, "weak-tampered")
    assert f.anonymous.get(f"/org/{ORG}/gvc/{SENTINEL}", headers=bearer(weak)).status_code == 404
    _, _, header, payload, signature = weak.split(".")
    claims = {**_unb64(payload), "sa": "admin", "sub": f"/org/{ORG}/serviceaccount/admin", "jti": f.admin_key_name}
    return f"{_prefix(f, f.signing.kid)}.{header}.{_b64(claims)}.{signature}"


def tampered_signature(f: Forge) -> str:
    parts = f.server.key.split(".")
    signature = bytearray(base64.urlsafe_b64decode(parts[4] + "=="))
    signature[0] ^= 0x01
    parts[4] = _b64(bytes(signature))
    return ".".join(parts)


def unknown_key_id(f: Forge) -> str:
    stranger = SigningKey("0123456789abcdef", Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate().public_key())
    return mint(stranger, ORG, "admin", f.admin_key_name)


def known_kid_other_private_key(f: Forge) -> str:
    impostor = Ed25519PrivateKey.generate()
    return mint(SigningKey(f.signing.kid, impostor, impostor.public_key()), ORG, "admin", f.admin_key_name)


def expired(f: Forge) -> str:
    """Signed by the real signing key, for a key the admin holds, but expired a minute ago."""
    return mint(f.signing, ORG, "admin", f.admin_key_name, expires_in=-60)


def _grant_view_on_gvcs(f: Forge, account: str) -> None:
    policy = {
        "name": f"view-gvc-{account}",
        "targetKind": "gvc",
        "target": "all",
        "bindings": [{"permissions": ["view"], "principalLinks": [f"//serviceaccount/{account}"]}],
    }
    ok(f.admin.post(f"/org/{ORG}/policy", json=policy), 201)


def _works(f: Forge, token: str, path: str = f"/org/{ORG}/gvc/{SENTINEL}") -> None:
    r = f.anonymous.get(path, headers=bearer(token))
    assert r.status_code == 200, r.text


def revoked(f: Forge) -> str:
    account = "revoked-sa"
    token = service_account_with_key(f.admin, ORG, account)
    _grant_view_on_gvcs(f, account)
    _works(f, token)
    key_name = token.split(".")[0]
    ok(f.admin.patch(f"/org/{ORG}/serviceaccount/{account}", json={"$drop/keys": [key_name]}))
    return token


def deleted_account(f: Forge) -> str:
    """The account is deleted, then one of the same name made again: the old key stays dead."""
    account = "deleted-sa"
    token = service_account_with_key(f.admin, ORG, account)
    _grant_view_on_gvcs(f, account)
    _works(f, token)
    assert f.admin.delete(f"/org/{ORG}/policy/view-gvc-{account}").status_code == 202
    assert f.admin.delete(f"/org/{ORG}/serviceaccount/{account}").status_code == 202
    ok(f.admin.post(f"/org/{ORG}/serviceaccount", json={"name": account}), 201)
    _grant_view_on_gvcs(f, account)
    return token


def other_org(f: Forge) -> str:
    return f.beta_key()


def garbage(f: Forge) -> str:
    return "not-a-key-at-all"


def garbage_five_segments(f: Forge) -> str:
    return f"{new_key_name()}.e30.e30.e30.e30"


ATTACKS: dict[str, Callable[[Forge], str]] = {
    "alg-none": alg_none,
    "hs256-signed-with-the-public-key": hs256_with_public_key,
    "tampered-payload": tampered_payload,
    "tampered-signature": tampered_signature,
    "unknown-key-id": unknown_key_id,
    "known-key-id-other-private-key": known_kid_other_private_key,
    "expired": expired,
    "revoked-key": revoked,
    "deleted-service-account": deleted_account,
    "key-of-another-org": other_org,
    "garbage": garbage,
    "garbage-five-segments": garbage_five_segments,
}


def _assert_401(r: httpx.Response) -> None:
    assert r.status_code == 401, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
    body = r.json()
    assert body["status"] == 401 and body["code"] == "unauthorized"
    assert "items" not in body and MARKER not in r.text and SENTINEL not in r.text


def _probe(f: Forge, headers: dict[str, str], acme_only: bool = False) -> None:
    """Every read and write an attacker would try in acme; each must be 401 without item data.
    Unless ``acme_only`` (a valid key of another org), also the org-less paths."""
    c, base = f.anonymous, f"/org/{ORG}/gvc"
    query = {"spec": {"terms": [{"tag": "marker", "value": MARKER}]}}
    answers = [
        c.get(f"{base}/{SENTINEL}", headers=headers),
        c.get(base, headers=headers),
        c.post(f"{base}/-query", json=query, headers=headers),
        c.get(f"{base}/{SENTINEL}/-eventlog", headers=headers),
        c.get(f"{base}/{SENTINEL}/-accessreport", headers=headers),
        c.get(f"/export/crd{base}/{SENTINEL}", headers=headers),
        c.get(f"/export/terraform{base}", headers=headers),
        c.get(f"{base}/no-such-gvc", headers=headers),
        c.post(base, json={"name": "forged"}, headers=headers),
        c.put(base, json={"name": "forged-put"}, headers=headers),
        c.patch(f"{base}/{SENTINEL}", json={"description": "forged"}, headers=headers),
        c.delete(f"{base}/{SENTINEL}", headers=headers),
        c.post(f"/org/{ORG}/serviceaccount/admin/-addKey", json={"description": "forged"}, headers=headers),
        c.get(f"/org/{ORG}", headers=headers),
        c.patch(f"/org/{ORG}", json={"description": "forged"}, headers=headers),
    ]
    if not acme_only:
        answers += [c.get("/org", headers=headers), c.post("/org", json={"name": "forged-org"}, headers=headers)]
    for r in answers:
        _assert_401(r)


@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
def test_attack_is_401_and_reads_and_writes_nothing(forge: Forge, attack: str) -> None:
    token = ATTACKS[attack](forge)
    before = forge.snapshot()
    acme_only = attack == "key-of-another-org"  # valid in beta: /org answers it (tested below)
    _probe(forge, bearer(token), acme_only)
    _probe(forge, {"Authorization": token}, acme_only)  # the bare key form too
    assert forge.snapshot() == before
    assert forge.admin.get("/org/forged-org").status_code == 404


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": ""}, {"Authorization": "Bearer"}, {"Authorization": "Basic"}],
    ids=["no-header", "empty-header", "bearer-without-key", "basic-scheme"],
)
def test_missing_or_empty_credentials_are_401(forge: Forge, headers: dict[str, str]) -> None:
    before = forge.snapshot()
    _probe(forge, headers)
    assert forge.snapshot() == before


def _raw_get(server: ServerProcess, path: str, authorization: bytes) -> tuple[int, bytes]:
    """A request with a header value httpx will not send (trailing whitespace)."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(
            b"GET "
            + path.encode()
            + b" HTTP/1.1\r\nHost: x\r\nAuthorization: "
            + authorization
            + b"\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


@pytest.mark.parametrize("value", [b"Bearer ", b"Bearer    ", b"bearer \t"], ids=["space", "spaces", "tab"])
def test_an_empty_bearer_is_401(forge: Forge, value: bytes) -> None:
    for path in (f"/org/{ORG}/gvc/{SENTINEL}", f"/org/{ORG}/gvc"):
        status, body = _raw_get(forge.server, path, value)
        assert status == 401 and json.loads(body)["code"] == "unauthorized"
        assert MARKER.encode() not in body and SENTINEL.encode() not in body


def test_a_key_of_another_org_gets_the_same_401_for_what_exists_and_what_does_not(forge: Forge) -> None:
    """Not even existence leaks: a missing item, a missing kind's item and a missing org all
    answer exactly like an existing item."""
    h = bearer(forge.beta_key())
    answers = [
        forge.anonymous.get(path, headers=h)
        for path in (
            f"/org/{ORG}/gvc/{SENTINEL}",
            f"/org/{ORG}/gvc/does-not-exist",
            f"/org/{ORG}/domain/missing.example.com",
            "/org/no-such-org/gvc/x",
            f"/org/{ORG}",
        )
    ]
    for r in answers:
        _assert_401(r)
    assert len({(r.status_code, r.json()["message"], r.json()["code"]) for r in answers}) == 1
    names = [i["name"] for i in ok(forge.anonymous.get("/org", headers=h))["items"]]
    assert names == ["beta"]
    refused = forge.anonymous.post("/org", json={"name": "gamma"}, headers=h)
    assert refused.status_code == 403 and forge.admin.get("/org/gamma").status_code == 404


def test_a_key_that_expires_while_cached_is_refused_once_expired(forge: Forge) -> None:
    """The server caches verified keys; the cache must not outlive a key's ``exp``."""
    import time

    token = mint(forge.signing, ORG, "admin", forge.admin_key_name, expires_in=2)
    expires = _unb64(token.split(".")[3])["exp"]
    assert time.time() < expires
    r = forge.anonymous.get(f"/org/{ORG}/gvc/{SENTINEL}", headers=bearer(token))
    assert r.status_code == 200, "a key is good until it expires"
    while time.time() <= expires + 0.1:
        time.sleep(0.05)
    before = forge.snapshot()
    _probe(forge, bearer(token))
    assert forge.snapshot() == before


def test_the_bare_key_and_any_case_of_bearer_are_accepted(forge: Forge) -> None:
    """The control for the probes above: a real key in every accepted form reads the item."""
    for value in (
        forge.server.key,
        f"Bearer {forge.server.key}",
        f"bearer {forge.server.key}",
        f"BEARER {forge.server.key}",
    ):
        r = forge.anonymous.get(f"/org/{ORG}/gvc/{SENTINEL}", headers={"Authorization": value})
        assert r.status_code == 200 and MARKER in r.text
