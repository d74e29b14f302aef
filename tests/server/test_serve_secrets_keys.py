"""Where ``plinth serve`` gets the keys that seal secrets, on a real server process."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plinth.sealing.keys import generate_key, key_file_text, read_key_file
from tests.support import pg
from tests.support.server import free_port, start_server


def _serve(args: list[str], env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``plinth serve`` expected to refuse to start (it would otherwise run until stopped)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    env.update(env_extra or {})
    argv = [sys.executable, "-m", "plinth", "serve", "--port", str(free_port()), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)


@pytest.mark.postgres
def test_postgres_without_a_key_refuses_to_start_and_says_why(tmp_path: Path) -> None:
    url = pg.create_database()
    try:
        refused = _serve(["--database-url", url, "--data-dir", str(tmp_path)])
        assert refused.returncode == 1
        assert "PostgreSQL store needs a secrets key that every replica shares" in refused.stderr
        assert "--secrets-key-file" in refused.stderr and "PLINTH_SECRETS_KEY" in refused.stderr
        assert not (tmp_path / "secrets.key").exists(), "no key is made up for replicas"
    finally:
        pg.drop_database(url)


def test_bad_key_settings_refuse_to_start_without_showing_the_key(tmp_path: Path) -> None:
    missing = _serve(["--data-dir", str(tmp_path), "--secrets-key-file", str(tmp_path / "nope")])
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    short = base64.b64encode(b"too short").decode()
    wrong = _serve(["--data-dir", str(tmp_path)], {"PLINTH_SECRETS_KEY": short})
    assert wrong.returncode == 1 and "32 bytes" in wrong.stderr and short not in wrong.stderr
    key_file = tmp_path / "keys"
    key_file.write_text(key_file_text([generate_key()]))
    both = _serve(["--data-dir", str(tmp_path), "--secrets-key-file", str(key_file)], {"PLINTH_SECRETS_KEY": short})
    assert both.returncode == 1 and "either" in both.stderr


def test_sqlite_makes_its_key_on_first_start_and_keeps_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start_server(data)
    try:
        log = first.log_path.read_text()
        assert f"Generated a secrets key in {data / 'secrets.key'}" in log
        assert oct((data / "secrets.key").stat().st_mode & 0o777) == "0o600"
        kids = read_key_file(data / "secrets.key").kids
        with first.client() as api:
            made = api.post("/org/acme/secret", json={"name": "kept", "type": "opaque", "data": {"payload": "kept"}})
            assert made.status_code == 201, made.text
    finally:
        first.stop()
    second = start_server(data)
    try:
        assert "Generated a secrets key" not in second.log_path.read_text()
        assert read_key_file(data / "secrets.key").kids == kids
        with second.client() as api:
            assert api.get("/org/acme/secret/kept/-reveal").json()["data"]["payload"] == "kept"
    finally:
        second.stop()
