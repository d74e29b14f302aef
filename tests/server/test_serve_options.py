"""`plinth serve` options, each exercised on a real server process."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.server import free_port, start_server
from tests.support.tls import self_signed


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_two_workers_share_one_sqlite_store_without_losing_writes(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", workers=2)
    try:
        # uvicorn's supervisor runs the workers as child processes (plus a resource tracker).
        assert len(_children(server.process.pid)) >= 2
        with server.client() as api:
            api.post("/org/acme/gvc", json={"name": "shared"})

        def writer(i: int) -> int:
            with server.client() as client:
                return client.patch("/org/acme/gvc/shared", json={"tags": {f"k{i}": i}}).status_code

        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(writer, range(16))) == [200] * 16
        with server.client() as api:
            item = api.get("/org/acme/gvc/shared").json()
        assert item["version"] == 17 and len(item["tags"]) == 16
    finally:
        server.stop()


def test_every_sqlite_worker_reads_each_acknowledged_write(tmp_path: Path) -> None:
    """Each worker serves reads from its own record cache: an acknowledged write must still be
    what every later read sees, whichever worker made it and whichever answers the read."""
    server = start_server(tmp_path / "data", workers=2)
    try:
        with server.client() as api:
            assert api.post("/org/acme/gvc", json={"name": "seen"}).status_code == 201
        for i in range(30):
            with server.client() as writer:  # a new connection: either worker may take it
                acked = writer.patch("/org/acme/gvc/seen", json={"description": f"write {i}"})
            assert acked.status_code == 200
            for _ in range(4):
                with server.client() as reader:
                    item = reader.get("/org/acme/gvc/seen").json()
                assert (item["version"], item["description"]) == (i + 2, f"write {i}")
    finally:
        server.stop()


def test_tls_serves_https_with_the_given_certificate(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    server = start_server(
        tmp_path / "data", extra_args=("--tls-cert", str(cert), "--tls-key", str(key)), scheme="https", verify=str(cert)
    )
    try:
        assert server.url.startswith("https://")
        with server.client(verify=str(cert)) as api:
            assert api.get("/org/acme").json()["name"] == "acme"
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.url}/healthz")  # the system trust store does not know the certificate
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url.replace("https", "http") + "/healthz")
    finally:
        server.stop()


def test_tls_cert_without_key_is_a_usage_error(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "plinth", "serve", "--tls-cert", str(cert), "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--tls-key" in r.stderr


def test_environment_equivalents_configure_the_server(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "envdata"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    env.update({"PLINTH_PORT": str(port), "PLINTH_DATA_DIR": str(data), "PLINTH_ORG": "fromenv"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "plinth", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        banner = proc.stdout.readline().decode() if proc.stdout else ""
        assert f"http://127.0.0.1:{port}" in banner and "org: fromenv" in banner
        key = proc.stdout.readline() and proc.stdout.readline().decode().strip() if proc.stdout else ""
        assert (data / "bootstrap-admin.key").read_text().strip() == key
        assert oct((data / "bootstrap-admin.key").stat().st_mode & 0o777) == "0o600"
        for _ in range(100):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/org/fromenv", headers={"Authorization": f"Bearer {key}"})
                break
            except httpx.HTTPError:
                import time

                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["name"] == "fromenv"
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)


def test_restart_keeps_data_and_does_not_bootstrap_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start_server(data)
    key = first.key
    with first.client() as api:
        api.post("/org/acme/gvc", json={"name": "kept"})
    first.stop()
    second = start_server(data)
    try:
        assert second.key == key
        assert "Admin key:" in second.log_path.read_text() and key not in second.log_path.read_text()
        with second.client() as api:
            assert api.get("/org/acme/gvc/kept").json()["version"] == 1
    finally:
        second.stop()
