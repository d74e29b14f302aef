"""How ``/console`` is served (no browser needed): open, with a strict Content-Security-Policy
and ``nosniff`` on every file, revalidated by ETag, announced by ``plinth serve``, and gone
with ``--no-console``."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from plinth import console
from plinth.kinds import KINDS
from plinth.server.metrics import route_of
from tests.support.server import ServerProcess, start_server

CSP = {
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
}


@pytest.fixture(scope="module")
def off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = start_server(Path(tmp_path_factory.mktemp("plinth-no-console")), extra_args=("--no-console",))
    try:
        yield process
    finally:
        process.stop()


@pytest.mark.parametrize(
    "path",
    [
        "/console",
        "/console/",
        "/console/app.js",
        "/console/console.css",
        "/console/kinds.json",
        "/console/vendor/js-yaml.esm.min.mjs",
    ],
)
def test_every_console_file_is_open_with_strict_security_headers(server: ServerProcess, path: str) -> None:
    answer = httpx.get(server.url + path)  # no token: the page signs in by itself
    assert answer.status_code == 200
    assert set(answer.headers["content-security-policy"].split("; ")) == CSP
    assert "unsafe-inline" not in answer.headers["content-security-policy"]
    assert "unsafe-eval" not in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["cache-control"] == "no-cache"
    assert "set-cookie" not in answer.headers
    again = httpx.get(server.url + path, headers={"If-None-Match": answer.headers["etag"]})
    assert (again.status_code, again.content) == (304, b"")


def test_the_page_loads_only_its_own_module_and_stylesheet(server: ServerProcess) -> None:
    page = httpx.get(f"{server.url}/console").text
    assert '<script type="module" src="/console/app.js"></script>' in page
    assert page.count("<script") == 1 and " on" not in page.split("<body>")[1].replace(" only", "")
    assert "http://" not in page and "https://" not in page  # nothing from elsewhere
    for script in ("app.js", "vendor/js-yaml.esm.min.mjs"):  # a module needs a JavaScript type under nosniff
        assert httpx.get(f"{server.url}/console/{script}").headers["content-type"] == "text/javascript; charset=utf-8"


#: The vendored libraries, pinned by the SHA-256 of the file their package publishes
#: (``static/vendor/README.md`` says where each comes from).
VENDORED = {"vendor/js-yaml.esm.min.mjs": "de0f5266d4312ab9cd564aba4217eb9cc98dcfd18bd59988aa7e0971e7c722b5"}


def _without_licence_banner(name: str, text: str) -> str:
    """A vendored file's text without its leading ``/*! ... @license ... */`` comment, the one
    place such a file may name its project's address: a comment loads nothing."""
    if name in VENDORED and text.startswith("/*!"):
        end = text.index("*/")
        assert "@license" in text[:end], name
        return text[end + 2 :]
    return text


def test_the_vendored_files_are_exactly_the_pinned_ones() -> None:
    shipped = {name for name in console.names() if name.startswith("vendor/")}
    assert shipped == set(VENDORED)
    for name, digest in VENDORED.items():
        assert hashlib.sha256(console.STATIC.joinpath(name).read_bytes()).hexdigest() == digest, name
        assert digest in console.STATIC.joinpath("vendor", "README.md").read_text(), name


def test_the_shipped_files_use_no_html_parsing_eval_or_other_origins() -> None:
    for name in console.names():
        text = _without_licence_banner(name, console.STATIC.joinpath(name).read_text())
        for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert banned not in text, f"{name} uses {banned}"
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", ""), name
        assert "https://" not in text, name
        assert "localStorage." not in text and "document.cookie" not in text, name


def test_kinds_json_names_every_kind_with_its_scope(server: ServerProcess) -> None:
    listed = httpx.get(f"{server.url}/console/kinds.json").json()["kinds"]
    assert [(k["name"], k["scope"], set(k["verbs"]), set(k["serverFields"]), k["sealed"]) for k in listed] == [
        (k.name, k.scope, k.access.verbs, k.schema.server_fields, list(k.schema.sealed)) for k in KINDS
    ]


def test_unknown_files_are_404_and_writes_405(server: ServerProcess) -> None:
    for path in ("/console/nope.js", "/console/static/app.js", "/console/%2e%2e/pyproject.toml", "/consoles"):
        assert httpx.get(server.url + path).status_code in (401, 404), path
    assert httpx.get(f"{server.url}/console/nope.js").json()["code"] == "not_found"
    refused = httpx.post(f"{server.url}/console", content=b"{}")
    assert (refused.status_code, refused.headers["allow"]) == (405, "GET, HEAD")


def test_console_requests_share_one_metrics_route() -> None:
    assert {route_of(p) for p in ("/console", "/console/", "/console/app.js", "/console/x/y")} == {"/console"}


def test_serve_announces_the_console_beside_the_admin_key(server: ServerProcess) -> None:
    lines = server.log_lines()
    at = lines.index(f"Console: {server.url}/console (sign in with the admin key)")
    assert lines[at - 2].startswith("Admin key") and lines[at - 1] == f"  {server.key}"


def test_no_console_turns_it_off_and_keeps_the_api(off: ServerProcess) -> None:
    for path in ("/console", "/console/", "/console/app.js", "/console/kinds.json"):
        answer = httpx.get(off.url + path)
        assert answer.status_code == 404, path
        assert "--no-console" in answer.json()["message"]
    assert not any(line.startswith("Console:") for line in off.log_lines())
    with off.client() as client:
        assert client.get(f"/org/{off.org}").status_code == 200


def test_files_go_gzipped_to_a_browser_that_accepts_it_with_an_etag_of_their_own(server: ServerProcess) -> None:
    for path in ("/console", "/console/app.js", "/console/console.css", "/console/kinds.json"):
        name = path.removeprefix("/console").lstrip("/")
        raw = httpx.get(server.url + path, headers={"Accept-Encoding": "identity"})
        packed = httpx.get(server.url + path, headers={"Accept-Encoding": "br;q=1, gzip;q=0.8"})
        assert "content-encoding" not in raw.headers, path
        assert packed.headers["content-encoding"] == "gzip", path
        assert raw.headers["vary"] == packed.headers["vary"] == "Accept-Encoding"
        assert packed.content == raw.content  # httpx inflated it: the same file
        if name != "kinds.json":
            assert raw.content == (console.asset(name) or console.asset("")).body  # type: ignore[union-attr]
        assert int(packed.headers["content-length"]) < len(raw.content) / 2, path
        assert raw.headers["etag"] != packed.headers["etag"]
        # Each ETag revalidates its own representation only.
        again = httpx.get(server.url + path, headers={"If-None-Match": packed.headers["etag"]})
        assert again.status_code == 304
        other = httpx.get(
            server.url + path, headers={"If-None-Match": packed.headers["etag"], "Accept-Encoding": "identity"}
        )
        assert other.status_code == 200 and "content-encoding" not in other.headers
    refused = httpx.get(f"{server.url}/console/app.js", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "content-encoding" not in refused.headers


@pytest.mark.parametrize(
    ("header", "gzipped"),
    [
        ("gzip", True),
        ("deflate, gzip;q=0.5", True),
        ("*", True),
        ("GZIP", True),
        ("", False),
        ("identity", False),
        ("gzip;q=0", False),
        ("gzip; q=0.0", False),
        ("gzip;q=x", False),
        ("br", False),
    ],
)
def test_accept_encoding_is_read_with_its_q_values(header: str, gzipped: bool) -> None:
    assert console.accepts_gzip(header) is gzipped


def test_config_json_says_no_id_token_sign_in_without_an_issuer(server: ServerProcess) -> None:
    answer = httpx.get(f"{server.url}/console/config.json")
    assert answer.status_code == 200 and answer.json() == {"oidc": None}
    assert answer.headers["content-security-policy"]
