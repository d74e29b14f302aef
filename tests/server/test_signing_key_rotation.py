"""Rotating the signing key: keys minted before keep working, new keys carry the new key id."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

from tests.support.server import start_server


def _kid(key: str) -> str:
    readable = key.split(".")[1]
    return base64.urlsafe_b64decode(readable + "=" * (-len(readable) % 4)).decode().rsplit(".", 1)[1]


def test_keys_minted_before_a_rotation_keep_working(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data)
    try:
        with server.client() as api:
            api.post("/org/acme/serviceaccount", json={"name": "robot"})
            old = api.post("/org/acme/serviceaccount/robot/-addKey", json={"description": "before"}).json()["key"]
        done = subprocess.run(
            [sys.executable, "-m", "plinth", "signing-key", "rotate", "--data-dir", str(data)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        new_kid = done.stdout.split()[3]
        with server.client() as api:
            new = api.post("/org/acme/serviceaccount/robot/-addKey", json={"description": "after"}).json()["key"]
        assert _kid(new) == new_kid != _kid(old)
        # Both robot keys authenticate (the robot holds no permission: the org answers 404 as a
        # missing one would, docs/api.md "Errors", not 401); so does the admin's.
        for key in (old, new):
            with server.client(token=key) as client:
                assert client.get("/org/acme").status_code == 404, key[:16]
        with server.client() as admin:
            assert admin.get("/org/acme").status_code == 200
    finally:
        server.stop()
