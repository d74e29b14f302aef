"""Watch versions do not show the store-wide change counter (issue 21, defect 7).

A watch's ``resourceVersion`` was the seq of the change log, which every org's writes move: a
tenant read other tenants' write counts from its first bookmark, from the gaps between its own
events, and from the 410 message (which named the oldest and newest seq held). Versions are now
sealed (docs/watch.md, "Versions"): opaque, and a resumable position all the same.
"""

from __future__ import annotations

import base64
import re

import httpx

from plinth.engine.opaque import seal_seq
from tests.api.authz_support import ok
from tests.support.server import ServerProcess
from tests.support.versions import seq_reader, token_key_of
from tests.support.watching import WatchReader


def _watch(server: ServerProcess, path: str, **params: str) -> WatchReader:
    return WatchReader(server.url, path, server.key, params)


def _first_bookmark(server: ServerProcess, path: str) -> str:
    with _watch(server, path) as reader:
        first = reader.next()
    assert first is not None and first["type"] == "BOOKMARK", first
    return str(first["resourceVersion"])


def test_a_version_shows_no_count(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    path = f"/org/{org}/gvc"
    before = _first_bookmark(server, path)
    for n in range(3):  # writes the watcher cannot see (another kind), as another tenant's would be
        ok(api.post(f"/org/{org}/group", json={"name": f"ctr-{n}"}), 201)
    after = _first_bookmark(server, path)
    seq = seq_reader(server)
    assert seq(after) >= seq(before) + 3  # the counter moved underneath...
    for version in (before, after):  # ...and neither version shows it
        assert not version.isdigit(), version
        assert str(seq(version)) not in version
        raw = base64.urlsafe_b64decode(version + "=" * (-len(version) % 4))
        assert seq(version).to_bytes(8, "big") not in raw


def test_resuming_from_an_opaque_version_still_works(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    path = f"/org/{org}/gvc"
    start = _first_bookmark(server, path)
    ok(api.post(f"/org/{org}/gvc", json={"name": "ctr-resume"}), 201)
    ok(api.patch(f"/org/{org}/gvc/ctr-resume", json={"description": "again"}))
    with _watch(server, path, resourceVersion=start) as reader:
        events = reader.changes(2)
    assert [(e["type"], e["object"]["name"]) for e in events] == [("ADDED", "ctr-resume"), ("MODIFIED", "ctr-resume")]
    with _watch(server, path, resourceVersion=events[0]["resourceVersion"]) as reader:
        assert reader.changes(1)[0]["resourceVersion"] == events[1]["resourceVersion"]


def _gone(response: httpx.Response, version: str) -> None:
    assert response.status_code == 410, response.text
    body = response.json()
    assert body["code"] == "list_again"
    assert body["details"] == {"resourceVersion": version}
    assert not re.search(r"\d", body["message"]), body["message"]


def test_the_410_names_no_counter(server: ServerProcess, api: httpx.Client) -> None:
    path = f"/org/{server.org}/gvc"
    _first_bookmark(server, path)  # the store has its token key
    future = seal_seq(token_key_of(server), 10**15)
    _gone(api.get(path, params={"watch": "true", "resourceVersion": future}), future)
    # A bare number (a version from before versions were sealed) cannot be placed: list again.
    _gone(api.get(path, params={"watch": "true", "resourceVersion": "12"}), "12")


def test_a_version_the_server_did_not_make_is_400(server: ServerProcess, api: httpx.Client) -> None:
    path = f"/org/{server.org}/gvc"
    real = _first_bookmark(server, path)
    changed = ("A" if real[0] != "A" else "B") + real[1:]
    for bad in (changed, "abc", "x" * 22, "-1", "1" * 20, "true"):
        response = api.get(path, params={"watch": "true", "resourceVersion": bad})
        assert response.status_code == 400, (bad, response.text)
        assert response.json()["details"] == {"parameter": "resourceVersion"}
