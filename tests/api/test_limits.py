"""Hostile and broken bodies, through real HTTP on both backends: each limit is a clear error
with the usual body, and nothing is stored (docs/api.md, "Limits")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.server import ServerProcess


def _error(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == status and body["id"] == r.headers["x-request-id"] and body["message"]
    if code is not None:
        assert body["code"] == code
    return body


def _paths(err: dict[str, Any]) -> set[str]:
    return {e["path"] for e in err["details"]["errors"]}


def _nested(depth: int) -> Any:
    """An object ``depth`` levels deep (the outermost counts as one)."""
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.fixture
def gvc(api: httpx.Client, unique: str) -> Iterator[str]:
    """A GVC that exists for the test (for PATCH and for GVC-scoped kinds)."""
    assert api.post("/org/acme/gvc", json={"name": unique}).status_code == 201
    yield unique
    api.delete(f"/org/acme/gvc/{unique}")


def _absent(api: httpx.Client, path: str) -> None:
    assert api.get(path).status_code == 404, f"{path} was stored"


# -- size ----------------------------------------------------------------------------------------


def test_bodies_over_one_mebibyte_are_413_for_every_write(api: httpx.Client, unique: str, gvc: str) -> None:
    pad = {"pad": "y" * (1024 * 1024)}
    _error(api.post("/org/acme/gvc", json={"name": unique + "x", "tags": pad}), 413, "payload_too_large")
    _error(api.put(f"/org/acme/gvc/{unique}x", json={"tags": pad}), 413)
    _error(api.patch(f"/org/acme/gvc/{gvc}", json={"tags": pad}), 413)
    _absent(api, f"/org/acme/gvc/{unique}x")
    assert api.get(f"/org/acme/gvc/{gvc}").json()["version"] == 1


def test_a_streamed_body_without_a_length_is_cut_at_the_limit(api: httpx.Client, unique: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "' + unique.encode() + b'", "description": "'
        for _ in range(300):
            yield b"z" * 4096  # 1.2 MiB in all, chunked: no Content-Length to refuse up front
        yield b'"}'

    r = api.post("/org/acme/gvc", content=chunks(), headers={"content-type": "application/json"})
    _error(r, 413)
    _absent(api, f"/org/acme/gvc/{unique}")


# -- nesting -------------------------------------------------------------------------------------


def test_json_nested_deeper_than_64_levels_is_400_naming_the_limit(api: httpx.Client, unique: str) -> None:
    body = {"name": unique, "spec": _nested(64)}  # 65 levels with the outer object
    err = _error(api.post("/org/acme/gvc", json=body), 400, "bad_request")
    assert "64" in err["message"] and err["details"] == {"limit": 64}
    _absent(api, f"/org/acme/gvc/{unique}")


def test_64_levels_are_decoded_and_judged_by_the_kind(api: httpx.Client, unique: str) -> None:
    body = {"name": unique, "spec": _nested(63)}  # 64 levels: decoded; the gvc spec rejects the field
    err = _error(api.post("/org/acme/gvc", json=body), 400, "invalid")
    assert "spec.a" in _paths(err)


def test_brackets_inside_strings_do_not_count_as_nesting(api: httpx.Client, unique: str) -> None:
    r = api.post("/org/acme/gvc", json={"name": unique, "description": "[{" * 100})
    assert r.status_code == 201, r.text
    api.delete(f"/org/acme/gvc/{unique}")


def test_a_patch_1000_levels_deep_is_400_not_a_crash(api: httpx.Client, gvc: str) -> None:
    raw = b'{"spec":' * 1000 + b"{}" + b"}" * 1000  # within orjson's own limit of 1024
    err = _error(api.patch(f"/org/acme/gvc/{gvc}", content=raw, headers={"content-type": "application/json"}), 400)
    assert "64" in err["message"]
    assert api.get(f"/org/acme/gvc/{gvc}").json()["version"] == 1


# -- bounds on arrays and maps -------------------------------------------------------------------


def test_more_than_50_tags_is_400_naming_tags(api: httpx.Client, unique: str, gvc: str) -> None:
    tags = {f"k{i}": i for i in range(51)}
    assert "tags" in _paths(_error(api.post("/org/acme/gvc", json={"name": unique + "t", "tags": tags}), 400))
    assert "tags" in _paths(_error(api.patch(f"/org/acme/gvc/{gvc}", json={"tags": tags}), 400))
    _absent(api, f"/org/acme/gvc/{unique}t")
    assert api.get(f"/org/acme/gvc/{gvc}").json()["tags"] == {}
    ok = api.patch(f"/org/acme/gvc/{gvc}", json={"tags": {f"k{i}": i for i in range(50)}})
    assert ok.status_code == 200, ok.text


def test_more_than_200_member_links_is_400(api: httpx.Client, unique: str) -> None:
    links = [f"//user/u{i}@example.com" for i in range(201)]
    err = _error(api.post("/org/acme/group", json={"name": unique, "memberLinks": links}), 400)
    assert any(p.startswith("memberLinks") for p in _paths(err)), err
    _absent(api, f"/org/acme/group/{unique}")


def test_policy_bounds_are_400_with_their_paths(api: httpx.Client, unique: str) -> None:
    base = {"name": unique, "targetKind": "gvc"}
    many_links = {**base, "targetLinks": [f"//gvc/g{i}" for i in range(201)]}
    assert any(p.startswith("targetLinks") for p in _paths(_error(api.post("/org/acme/policy", json=many_links), 400)))
    binding = {"permissions": ["view"], "principalLinks": ["//user/a@example.com"]}
    many_bindings = {**base, "target": "all", "bindings": [binding] * 51}
    assert any(p.startswith("bindings") for p in _paths(_error(api.post("/org/acme/policy", json=many_bindings), 400)))
    principals = [f"//user/u{i}@example.com" for i in range(201)]
    many_principals = {**base, "target": "all", "bindings": [{"permissions": ["view"], "principalLinks": principals}]}
    err = _error(api.post("/org/acme/policy", json=many_principals), 400)
    assert any(p.startswith("bindings[0].principalLinks") for p in _paths(err)), err
    _absent(api, f"/org/acme/policy/{unique}")


def test_more_than_150_routes_on_a_port_is_400_with_the_path(api: httpx.Client, unique: str, gvc: str) -> None:
    routes = [{"prefix": f"/p{i}", "workloadLink": f"//gvc/{gvc}/workload/web"} for i in range(151)]
    name = f"{unique}.example.com"
    err = _error(api.post("/org/acme/domain", json={"name": name, "spec": {"ports": [{"routes": routes}]}}), 400)
    assert "spec.ports[0].routes" in _paths(err)
    assert "150" in err["message"] or any("150" in e["message"] for e in err["details"]["errors"])
    _absent(api, f"/org/acme/domain/{name}")


def test_more_than_10_ports_is_400(api: httpx.Client, unique: str) -> None:
    ports = [{"number": 1000 + i} for i in range(11)]
    name = f"{unique}.example.com"
    err = _error(api.post("/org/acme/domain", json={"name": name, "spec": {"ports": ports}}), 400)
    assert "spec.ports" in _paths(err)
    _absent(api, f"/org/acme/domain/{name}")


# -- encoding and content types ------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "caf\xe9"}',  # Latin-1, not UTF-8
        b'{"name": "ok", "description": "\xff\xfe"}',
        b'{"name": "ok", "description": "\xed\xa0\x80"}',  # an encoded surrogate
        b'{"name": "ok", "description": "\xc3"}',  # a truncated sequence
    ],
)
def test_invalid_utf8_is_400(api: httpx.Client, raw: bytes) -> None:
    err = _error(api.post("/org/acme/gvc", content=raw, headers={"content-type": "application/json"}), 400)
    assert "UTF-8" in err["message"]
    _absent(api, "/org/acme/gvc/ok")


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"],
)
def test_wrong_content_types_are_415(api: httpx.Client, unique: str, content_type: str) -> None:
    raw = orjson.dumps({"name": unique})
    r = api.post("/org/acme/gvc", content=raw, headers={"content-type": content_type})
    _error(r, 415, "unsupported_media_type")
    _absent(api, f"/org/acme/gvc/{unique}")


def test_json_content_types_with_parameters_are_accepted(api: httpx.Client, unique: str) -> None:
    raw = orjson.dumps({"name": unique})
    r = api.post("/org/acme/gvc", content=raw, headers={"content-type": "application/json; charset=utf-8"})
    assert r.status_code == 201, r.text
    api.delete(f"/org/acme/gvc/{unique}")


# -- query parameters and methods ----------------------------------------------------------------


def test_a_dry_run_flag_that_is_not_a_boolean_is_400_and_writes_nothing(api: httpx.Client, unique: str) -> None:
    err = _error(api.post("/org/acme/gvc", params={"dryRun": "ture"}, json={"name": unique}), 400)
    assert err["details"] == {"parameter": "dryRun"}
    _absent(api, f"/org/acme/gvc/{unique}")
    assert api.post("/org/acme/gvc", params={"dryRun": "true"}, json={"name": unique}).status_code == 200
    _absent(api, f"/org/acme/gvc/{unique}")


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/org/acme", "GET, PUT, PATCH"),  # orgs are never deleted
        ("POST", "/org/acme/user", "GET"),  # users are invited, not created
        ("PATCH", "/org/acme/gvc", "GET, POST, PUT"),
        ("POST", "/org/acme/volumeset", "GET"),  # the org-wide listing of a GVC-scoped kind
        ("TRACE", "/org/acme/gvc/x1", "GET, PUT, PATCH, DELETE"),
        ("POST", "/org/acme/gvc/x1/-eventlog", "GET"),
        ("DELETE", "/healthz", "GET, HEAD"),
    ],
)
def test_405_names_the_allowed_methods_in_the_allow_header(
    api: httpx.Client, method: str, path: str, allow: str
) -> None:
    r = api.request(method, path)
    err = _error(r, 405, "method_not_allowed")
    assert r.headers["allow"] == allow == err["details"]["allow"]


def test_the_server_still_answers_after_all_that(server: ServerProcess, api: httpx.Client) -> None:
    assert server.process.poll() is None
    assert api.get("/org/acme").status_code == 200


# -- NUL characters (PostgreSQL cannot store them: refused on every backend alike) ---------------


@pytest.mark.parametrize(
    "body",
    [
        {"name": "{n}", "description": "a\u0000b"},
        {"name": "{n}", "tags": {"k\u0000": "v"}},
        {"name": "{n}", "tags": {"k": "v\u0000"}},
    ],
)
def test_nul_in_a_body_string_is_400_and_nothing_is_stored(api: httpx.Client, unique: str, body: Any) -> None:
    body = orjson.loads(orjson.dumps(body).replace(b"{n}", unique.encode()))
    err = _error(api.post("/org/acme/gvc", json=body), 400, "bad_request")
    assert "U+0000" in err["message"]
    _absent(api, f"/org/acme/gvc/{unique}")


def test_nul_in_a_query_is_400(api: httpx.Client) -> None:
    for term in ({"property": "description", "value": "a\u0000"}, {"tag": "t\u0000", "value": "x"}):
        _error(api.post("/org/acme/gvc/-query", json={"spec": {"terms": [term]}}), 400)


def test_an_escaped_backslash_before_u0000_is_just_text(api: httpx.Client, unique: str) -> None:
    r = api.post("/org/acme/gvc", json={"name": unique, "description": "C:\\u0000"})
    assert r.status_code == 201, r.text
    assert api.get(f"/org/acme/gvc/{unique}").json()["description"] == "C:\\u0000"
    api.delete(f"/org/acme/gvc/{unique}")


@pytest.mark.parametrize(
    "path",
    ["/org/acme/gvc/nu%00l", "/org/ac%00me/gvc", "/org/acme/domain/a%00.example.com", "/org/acme/user/a%00@x.io"],
)
def test_nul_in_a_path_is_404(api: httpx.Client, path: str) -> None:
    _error(api.get(path), 404, "not_found")


def test_a_forged_cursor_holding_nul_is_400(api: httpx.Client) -> None:
    import base64

    token = base64.urlsafe_b64encode(orjson.dumps({"v": 1, "p": "", "n": "a\u0000"})).decode().rstrip("=")
    assert _error(api.get("/org/acme/gvc", params={"cursor": token}), 400)["details"] == {"parameter": "cursor"}
