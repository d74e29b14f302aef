"""A real OpenID Connect issuer on loopback for tests: discovery document, JWKS, ID tokens.

It serves ``/.well-known/openid-configuration`` and ``/jwks`` over HTTP from a thread, with RSA
keys generated here, and mints ID tokens with PyJWT. ``rotate()`` publishes a new key,
``failing`` makes every answer a 500, and ``jwks_fetches`` counts how often the keys were read.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

AUDIENCE = "plinth-test"


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Issuer:
    def __init__(self, audience: str = AUDIENCE):
        self.audience = audience
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.current = self.rotate()
        self.failing = False
        self.jwks_fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if issuer.failing:
                    return self._answer(500, {"error": "down"})
                if self.path == "/.well-known/openid-configuration":
                    return self._answer(200, {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks"})
                if self.path == "/jwks":
                    issuer.jwks_fetches += 1
                    return self._answer(200, issuer.jwks())
                return self._answer(404, {"error": "not found"})

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def rotate(self, keep_old: bool = True) -> str:
        """Publish a new signing key and sign with it from now on; returns its kid."""
        kid = secrets.token_hex(6)
        if not keep_old:
            self.keys.clear()
        self.keys[kid] = rsa_key()
        self.current = kid
        return kid

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, key in self.keys.items():
            jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            out.append({**jwk, "kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": out}

    def claims(self, email: str, /, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": self.audience,
            "sub": f"sub-{email}",
            "email": email,
            "email_verified": True,
            "iat": now,
            "exp": now + 600,
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def mint(
        self, email: str, /, *, kid: str | None = None, key: rsa.RSAPrivateKey | None = None, **overrides: Any
    ) -> str:
        """An RS256 ID token for ``email``; ``overrides`` replace claims (``None`` drops one)."""
        kid = kid or self.current
        signing_key = key or self.keys[kid]
        return jwt.encode(self.claims(email, **overrides), signing_key, algorithm="RS256", headers={"kid": kid})

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> Issuer:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()
