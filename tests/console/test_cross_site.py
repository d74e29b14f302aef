"""No other site can make a state-changing request in the person's name (docs/console.md "Where
the key is kept"). With the console signed in, the browser opens a page of another origin (a
second loopback server, another port) that tries what such a page can: a cross-origin `fetch`
with the browser's credentials and a JSON body, a `no-cors` POST, and a form POST. None of them
may write: the key lives in the console's `sessionStorage` and goes only in an `Authorization`
header the console's own script sets; the server sets no cookie and answers no CORS preflight."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.console import pages
from tests.support.server import ServerProcess

# Each attempt records how it ended in `window.__tried`; the form posts into a frame last.
ATTACK = """<!doctype html><html><head><title>elsewhere</title></head><body>
<form id="f" method="POST" action="{api}/gvc" enctype="text/plain" target="sink">
<input name='{{"name":"csrf-form","x":"' value='"}}'></form>
<iframe name="sink" id="sink"></iframe>
<script>
window.__tried = {{}};
const note = (k, v) => {{ window.__tried[k] = v; }};
fetch("{api}/gvc", {{method: "POST", credentials: "include", headers: {{"Content-Type": "application/json"}},
  body: JSON.stringify({{name: "csrf-fetch"}})}}).then((r) => note("fetch", r.status), () => note("fetch", "blocked"));
fetch("{api}/gvc", {{method: "POST", mode: "no-cors", credentials: "include", headers: {{"Content-Type": "text/plain"}},
  body: JSON.stringify({{name: "csrf-nocors"}})}}).then((r) => note("nocors", r.type), () => note("nocors", "blocked"));
document.getElementById("sink").addEventListener("load", () => note("form", "sent"));
document.getElementById("f").submit();
</script></body></html>"""


@pytest.fixture(scope="module")
def elsewhere(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Another origin on loopback serving the attacking page; its URL."""
    root: Path = tmp_path_factory.mktemp("elsewhere")
    (root / "index.html").write_text(ATTACK.format(api=f"{server.url}/org/{server.org}"))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/index.html"
    finally:
        site.shutdown()
        site.server_close()


def test_a_page_of_another_origin_cannot_write_in_the_persons_name(
    browser: Any, server: ServerProcess, elsewhere: str
) -> None:
    pages.sign_in(browser, server.url, server.key)
    assert pages.session_key(browser) == server.key  # signed in, in this browser
    browser.get(elsewhere)
    pages.wait(browser).until(lambda d: len(d.execute_script("return window.__tried || {};")) == 3)
    tried = browser.execute_script("return window.__tried;")
    # The JSON fetch needs a preflight the server does not grant: the browser never sends it.
    assert tried["fetch"] == "blocked"
    # The others reach the server without a credential (an opaque answer, a page in the frame).
    assert tried["nocors"] == "opaque" and tried["form"] == "sent"
    assert browser.get_cookies() == []
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.key}"}) as api:
        names = {g["name"] for g in api.get(f"/org/{server.org}/gvc").json()["items"]}
    assert not {n for n in names if n.startswith("csrf")}, names

    # The two that reached the server were refused as unauthenticated (its access log, which
    # is flushed a moment later); the preflight, if the browser sent one, was not granted.
    def posts(_: Any) -> list[dict[str, Any]]:
        found = [json.loads(line) for line in server.log_lines() if line.startswith("{")]
        return [e for e in found if e.get("path") == f"/org/{server.org}/gvc" and e.get("method") != "GET"]

    pages.wait(browser).until(lambda d: len([e for e in posts(d) if e["method"] == "POST"]) == 2)
    assert {(e["method"], e["status"]) for e in posts(browser)} <= {("POST", 401), ("OPTIONS", 401), ("OPTIONS", 405)}
