"""Every error has one shape, carries the request id, and changes nothing stored."""

from __future__ import annotations

import httpx

from tests.support.server import ServerProcess


def _is_error(r: httpx.Response, status: int, code: str | None = None) -> dict[str, object]:
    body = r.json()
    assert r.status_code == status and body["status"] == status, r.text
    assert body["id"] == r.headers["x-request-id"]
    assert isinstance(body["message"], str) and body["message"]
    if code:
        assert body["code"] == code
    return body


def test_missing_and_bad_credentials_are_401(server: ServerProcess) -> None:
    _is_error(httpx.get(f"{server.url}/org/acme/gvc"), 401, "unauthorized")
    _is_error(httpx.get(f"{server.url}/org/acme/gvc", headers={"Authorization": "Bearer nope"}), 401)
    bare = httpx.get(f"{server.url}/org/acme", headers={"Authorization": server.key})
    assert bare.status_code == 200
    lower = httpx.get(f"{server.url}/org/acme", headers={"Authorization": f"bEaReR {server.key}"})
    assert lower.status_code == 200


def test_open_paths_need_no_token(server: ServerProcess) -> None:
    for path in ("/discovery", "/about", "/healthz", "/readyz", "/openapi.json"):
        assert httpx.get(f"{server.url}{path}").status_code == 200, path
    endpoints = httpx.get(f"{server.url}/discovery").json()["endpoints"]
    assert endpoints["terraform-exporter"].startswith(server.url)


def test_malformed_json_is_400(api: httpx.Client) -> None:
    r = api.post("/org/acme/gvc", content=b'{"name": ', headers={"content-type": "application/json"})
    _is_error(r, 400, "bad_request")


def test_wrong_content_type_is_415(api: httpx.Client) -> None:
    r = api.post("/org/acme/gvc", content=b"name: x", headers={"content-type": "text/yaml"})
    _is_error(r, 415)


def test_body_over_one_mebibyte_is_413_and_nothing_is_stored(api: httpx.Client, unique: str) -> None:
    huge = {"name": unique, "description": "x", "tags": {"pad": "y" * (1024 * 1024)}}
    _is_error(api.post("/org/acme/gvc", json=huge), 413)
    assert api.get(f"/org/acme/gvc/{unique}").status_code == 404


def test_method_not_allowed_is_405(api: httpx.Client) -> None:
    _is_error(api.post("/org/acme/gvc/x1/-eventlog", json={}), 405)
    _is_error(api.patch("/org/acme/gvc", json={}), 405)


def test_a_400_names_every_offending_field(api: httpx.Client, unique: str) -> None:
    body = {
        "name": unique,
        "description": "x" * 251,
        "tags": {"cpln/secret": "no"},
        "bogus": 1,
        "spec": {"loadBalancer": {"trustedProxies": 7}, "nope": True},
    }
    err = _is_error(api.post("/org/acme/gvc", json=body), 400, "invalid")
    paths = {e["path"] for e in err["details"]["errors"]}  # type: ignore[index]
    assert {"description", "tags.cpln/secret", "bogus", "spec.loadBalancer.trustedProxies", "spec.nope"} <= paths
    assert api.get(f"/org/acme/gvc/{unique}").status_code == 404


def test_name_in_body_must_match_path(api: httpx.Client, unique: str) -> None:
    r = api.put(f"/org/acme/gvc/{unique}", json={"name": unique + "x"})
    err = _is_error(r, 400)
    assert err["details"]["errors"][0]["path"] == "name"  # type: ignore[index]


def test_each_request_is_logged_as_one_structured_line(server: ServerProcess, api: httpx.Client) -> None:
    import json

    r = api.get("/org/acme")
    rid = r.headers["x-request-id"]
    for _ in range(50):
        lines = [json.loads(line) for line in server.log_lines() if line.startswith("{")]
        match = [entry for entry in lines if entry.get("request_id") == rid]
        if match:
            break
        import time

        time.sleep(0.05)
    assert match, "no log line for the request"
    entry = match[0]
    assert entry["method"] == "GET" and entry["path"] == "/org/acme" and entry["status"] == 200
    assert entry["duration_ms"] >= 0
