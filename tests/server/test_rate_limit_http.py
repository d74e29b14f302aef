"""Rate limiting per principal over real HTTP: 429 with Retry-After, and one runaway key
cannot starve another (docs/api.md, "Limits")."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from plinth.cli.store.serve import serve_command
from plinth.server.settings import Settings
from tests.support.server import ServerProcess, start_server

RATE, BURST = 2, 5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    args = ("--rate-limit", str(RATE), "--rate-burst", str(BURST))
    proc = start_server(tmp_path_factory.mktemp("ratelimit"), extra_args=args)
    try:
        yield proc
    finally:
        proc.stop()


def _until_refused(client: httpx.Client, path: str, most: int = 60) -> httpx.Response:
    """Request ``path`` until the answer is 429 (it must come within ``most`` requests)."""
    for _ in range(most):
        r = client.get(path)
        if r.status_code == 429:
            return r
    raise AssertionError(f"{most} requests to {path} and never a 429")


def _wait_out(r: httpx.Response) -> None:
    time.sleep(int(r.headers["retry-after"]) + 0.1)


def _second_key(api: httpx.Client, name: str) -> str:
    """A key of another service account, a superuser like the admin."""
    _retrying(lambda: api.post("/org/acme/serviceaccount", json={"name": name}))
    minted = _retrying(lambda: api.post(f"/org/acme/serviceaccount/{name}/-addKey", json={"description": "t"}))
    patch = {"$append/memberLinks": [f"//serviceaccount/{name}"]}
    assert _retrying(lambda: api.patch("/org/acme/group/superusers", json=patch)).status_code == 200
    return str(minted.json()["key"])


def _retrying(call: Callable[[], httpx.Response]) -> httpx.Response:
    """``call()`` until it is not refused for the rate (earlier tests may have used the bucket)."""
    for _ in range(30):
        r = call()
        if r.status_code != 429:
            assert r.status_code < 300, r.text
            return r
        _wait_out(r)
    raise AssertionError("never got through")


def test_one_runaway_key_cannot_starve_another(server: ServerProcess) -> None:
    with server.client() as runaway:
        other_key = _second_key(runaway, "steady")
        refused = _until_refused(runaway, "/org/acme")
        with server.client(other_key) as steady:
            assert [steady.get("/org/acme/gvc").status_code for _ in range(BURST)] == [200] * BURST
        _wait_out(refused)
        assert runaway.get("/org/acme").status_code == 200


def test_a_429_has_retry_after_in_whole_seconds_and_the_usual_body(server: ServerProcess) -> None:
    with server.client() as api:
        r = _until_refused(api, "/org/acme/gvc")
    retry = r.headers["retry-after"]
    assert retry.isdigit() and int(retry) >= 1
    body = r.json()
    assert body["status"] == 429 and body["code"] == "too_many_requests" and body["id"] == r.headers["x-request-id"]
    assert body["details"] == {"retry_after_s": int(retry)}
    assert "per second" in body["message"]


def test_a_refused_write_stores_nothing(server: ServerProcess) -> None:
    with server.client() as api:
        _until_refused(api, "/org/acme")
        r = api.post("/org/acme/gvc", json={"name": "refused"})
        assert r.status_code == 429
        _wait_out(r)
        assert api.get("/org/acme/gvc/refused").status_code == 404


def test_callers_without_credentials_are_limited_by_address_and_probes_never(server: ServerProcess) -> None:
    with httpx.Client(base_url=server.url) as anonymous:
        _until_refused(anonymous, "/discovery")
        assert anonymous.get("/openapi.json").status_code == 429  # one bucket per address
        assert anonymous.get("/org/acme", headers={"Authorization": "Bearer wrong"}).status_code == 429
        for _ in range(3 * BURST):
            assert anonymous.get("/healthz").status_code == 200
            assert anonymous.get("/readyz").status_code == 200
    with server.client() as api:  # an authenticated principal has its own bucket
        _retrying(lambda: api.get("/org/acme"))


def test_guessing_keys_is_limited_too(server: ServerProcess) -> None:
    with httpx.Client(base_url=server.url, headers={"Authorization": "Bearer guess"}) as guesser:
        statuses = {guesser.get("/org/acme").status_code for _ in range(BURST + 10)}
    assert 429 in statuses and statuses <= {401, 429}


def test_zero_disables_the_limit(tmp_path: Path) -> None:
    proc = start_server(tmp_path / "data", extra_args=("--rate-limit", "0"))
    try:
        with proc.client() as api:
            statuses = {api.get("/org/acme").status_code for _ in range(400)}  # past the default burst of 200
        assert statuses == {200}
    finally:
        proc.stop()


def test_the_defaults_are_generous_and_the_environment_sets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (Settings().rate_limit, Settings().rate_burst, Settings().request_timeout) == (1000.0, 2000, 30.0)
    monkeypatch.setenv("PLINTH_RATE_LIMIT", "7.5")
    monkeypatch.setenv("PLINTH_RATE_BURST", "9")
    monkeypatch.setenv("PLINTH_REQUEST_TIMEOUT", "3")
    params = serve_command.make_context("serve", []).params
    assert (params["rate_limit"], params["rate_burst"], params["request_timeout"]) == (7.5, 9, 3.0)
    settings = Settings(rate_limit=7.5, rate_burst=9, request_timeout=3.0)
    assert Settings.from_env(settings.to_env()) == settings
