"""Watches through real HTTP on both stores (docs/watch.md): the stream and its two encodings,
resuming, the initial state, 410, query watches, access (a revoked key, a lost right, the
per-principal bound), a slow consumer, status-only rewrites and a clean end at shutdown."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.api.authz_support import ok, service_account_with_key
from tests.api.conftest import BACKENDS
from tests.support.server import ServerProcess, serving
from tests.support.versions import seq_reader
from tests.support.watching import WatchReader, named

BUFFER = 256 * 1024
LIMIT = 3
RETENTION = 40
#: Changes of about 50 KB that fill a stalled stream's buffer, its socket's and the kernel's
#: (on loopback, about 1.5 MB besides the buffer).
WRITES = 80


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    args = (
        "--watch-bookmark-interval", "0.2",
        "--watch-limit", str(LIMIT),
        "--watch-buffer", str(BUFFER),
        "--watch-retention-count", str(RETENTION),
        "--watch-trim-interval", "0.1",
    )  # fmt: skip
    with serving(request.param, tmp_path_factory.mktemp("watch"), args) as proc:
        yield proc


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def _watch(
    server: ServerProcess, path: str, token: str | None = None, *, wait_for_room: bool = True, **params: str
) -> WatchReader:
    return WatchReader(server.url, path, token or server.key, params, wait_for_room=wait_for_room)


def _gvc(api: httpx.Client, org: str, name: str, **fields: Any) -> dict[str, Any]:
    return ok(api.post(f"/org/{org}/gvc", json={"name": name, **fields}), 201)  # type: ignore[no-any-return]


def _version_now(api: httpx.Client, server: ServerProcess, path: str) -> str:
    """The current resourceVersion of ``path``'s watch: its first bookmark."""
    with _watch(server, path) as reader:
        first = reader.next()
        assert first is not None and first["type"] == "BOOKMARK"
        return str(first["resourceVersion"])


def test_changes_arrive_in_order_with_the_item_as_get_shows_it(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    with _watch(server, f"/org/{org}/gvc") as reader:
        assert reader.status == 200
        _gvc(api, org, "w-order")
        ok(api.patch(f"/org/{org}/gvc/w-order", json={"description": "changed"}))
        shown = ok(api.get(f"/org/{org}/gvc/w-order"))
        ok(api.delete(f"/org/{org}/gvc/w-order"), 202)
        events = [e for e in reader.changes(3) if e["object"]["name"] == "w-order"]
    assert named(events) == [("ADDED", "w-order"), ("MODIFIED", "w-order"), ("DELETED", "w-order")]
    assert events[1]["object"] == shown
    assert events[2]["object"] == shown  # a delete carries the last state
    seq = seq_reader(server)  # versions are opaque to clients; the test reads their order
    versions = [seq(e["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and len(set(versions)) == 3


def test_an_idle_stream_gets_bookmarks_at_the_current_version(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    with _watch(server, f"/org/{org}/gvc") as reader:
        first = reader.next()
        _gvc(api, org, "w-bookmark")
        change = reader.changes(1)[0]
        bookmark = reader.until(lambda e: e["type"] == "BOOKMARK")[-1]
    assert first is not None and first["type"] == "BOOKMARK" and set(first) == {"type", "resourceVersion"}
    seq = seq_reader(server)
    assert seq(bookmark["resourceVersion"]) >= seq(change["resourceVersion"])


def test_resuming_from_a_version_sends_exactly_what_followed_it(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    path = f"/org/{org}/gvc"
    _gvc(api, org, "w-resume")
    start = _version_now(api, server, path)
    for n in range(3):
        ok(api.patch(f"/org/{org}/gvc/w-resume", json={"description": f"d{n}"}))
    with _watch(server, path, resourceVersion=start) as reader:
        events = reader.changes(3)
    assert [e["object"]["description"] for e in events] == ["d0", "d1", "d2"]
    # From the middle: only what came after it.
    with _watch(server, path, resourceVersion=events[0]["resourceVersion"]) as reader:
        again = reader.changes(2)
    assert [e["resourceVersion"] for e in again] == [e["resourceVersion"] for e in events[1:]]


def test_a_watch_gets_only_its_kind_and_gvc_live_and_when_resuming(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    for gvc in ("w-sel-a", "w-sel-b"):
        _gvc(api, org, gvc)
    path = f"/org/{org}/gvc/w-sel-a/volumeset"
    start = _version_now(api, server, path)

    def changes_elsewhere_then_mine(mine: str) -> None:
        body = {"spec": {"initialCapacity": 10}}
        ok(api.post(f"/org/{org}/gvc/w-sel-b/volumeset", json={"name": f"{mine}-other", **body}), 201)
        ok(api.patch(f"/org/{org}/gvc/w-sel-b", json={"description": mine}))
        ok(api.post(f"/org/{org}/gvc/w-sel-a/volumeset", json={"name": mine, **body}), 201)

    with _watch(server, path) as live:
        live.next()
        changes_elsewhere_then_mine("vs-live")
        seen_live = live.changes(1)
    changes_elsewhere_then_mine("vs-later")
    with _watch(server, path, resourceVersion=start) as resumed:  # a backlog of every kind
        seen_resumed = resumed.changes(2)
    assert named(seen_live) == [("ADDED", "vs-live")]
    assert named(seen_resumed) == [("ADDED", "vs-live"), ("ADDED", "vs-later")]
    org_wide = _watch(server, f"/org/{org}/volumeset", resourceVersion=start)
    with org_wide:
        assert {e["object"]["name"] for e in org_wide.changes(4)} == {
            "vs-live-other",
            "vs-live",
            "vs-later-other",
            "vs-later",
        }


def test_sse_sets_the_id_and_resumes_from_last_event_id(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    path = f"/org/{org}/gvc"
    _gvc(api, org, "w-sse")
    with WatchReader(server.url, path, server.key, sse=True) as reader:
        ok(api.patch(f"/org/{org}/gvc/w-sse", json={"description": "one"}))
        event = reader.changes(1)[0]
    assert event["_sse"]["event"] == "MODIFIED" and event["_sse"]["id"] == event["resourceVersion"]
    ok(api.patch(f"/org/{org}/gvc/w-sse", json={"description": "two"}))
    headers = {"Last-Event-ID": event["resourceVersion"]}
    with WatchReader(server.url, path, server.key, sse=True, headers=headers) as reader:
        resumed = reader.changes(1)[0]
    assert resumed["object"]["description"] == "two"


def test_initial_events_then_a_bookmark_then_changes(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    for name in ("w-init-a", "w-init-b"):
        _gvc(api, org, name)
    listed = {g["name"] for g in ok(api.get(f"/org/{org}/gvc"))["items"]}
    with _watch(server, f"/org/{org}/gvc", sendInitialEvents="true") as reader:
        initial = reader.until(lambda e: e.get("initialEventsEnd") is True)
        ok(api.patch(f"/org/{org}/gvc/w-init-a", json={"description": "after"}))
        after = reader.changes(1)[0]
    assert {e["object"]["name"] for e in initial[:-1]} == listed
    assert all(e["type"] == "ADDED" for e in initial[:-1])
    assert (after["type"], after["object"]["description"]) == ("MODIFIED", "after")
    seq = seq_reader(server)
    assert seq(after["resourceVersion"]) > seq(initial[-1]["resourceVersion"])


def test_a_version_the_log_no_longer_holds_is_410_list_again(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    path = f"/org/{org}/gvc"
    _gvc(api, org, "w-gone")
    old = _version_now(api, server, path)
    for n in range(RETENTION + 5):
        ok(api.patch(f"/org/{org}/gvc/w-gone", json={"description": f"n{n}"}))
    deadline = time.monotonic() + 30
    while True:  # the trim runs every 0.1 s
        with _watch(server, path, resourceVersion=old) as answer:
            if answer.status == 410 or time.monotonic() > deadline:
                break
        time.sleep(0.1)
    assert answer.status == 410 and answer.error_body["code"] == "list_again", answer.error_body
    future = api.get(path, params={"watch": "true", "resourceVersion": str(10**15)})
    assert future.status_code == 410
    assert api.get(path, params={"watch": "true", "resourceVersion": "abc"}).status_code == 400
    # Checked on every list, and both when both are sent (what /openapi.json says).
    assert api.get(path, params={"resourceVersion": "1"}, headers={"Last-Event-ID": "none"}).status_code == 400
    assert api.get(f"{path}/w-gone", params={"watch": "true"}).status_code == 400


def test_a_query_watch_sends_matching_items_and_deleted_when_one_stops_matching(
    server: ServerProcess, api: httpx.Client
) -> None:
    org = server.org
    query = {"spec": {"match": "all", "terms": [{"op": "=", "tag": "team", "value": "blue"}]}}
    reader = WatchReader(server.url, f"/org/{org}/gvc/-query", server.key, method="POST", body=query)
    with reader:
        _gvc(api, org, "w-q-red", tags={"team": "red"})
        _gvc(api, org, "w-q-blue", tags={"team": "blue"})
        ok(api.patch(f"/org/{org}/gvc/w-q-blue", json={"tags": {"team": "red"}}))
        events = reader.changes(2)
    assert named(events) == [("ADDED", "w-q-blue"), ("DELETED", "w-q-blue")]
    assert events[1]["object"]["tags"]["team"] == "red"


def test_a_status_only_rewrite_is_delivered_as_modified(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    placed = {"spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-2"]}}}
    _gvc(api, org, "w-status", **placed)
    ok(api.post(f"/org/{org}/gvc/w-status/volumeset", json={"name": "data", "spec": {"initialCapacity": 10}}), 201)
    with _watch(server, f"/org/{org}/gvc/w-status/volumeset") as reader:
        reader.next()  # the first bookmark: the watch is live
        links = ["//location/gcp-us-east1", "//location/aws-us-east-2"]
        ok(api.patch(f"/org/{org}/gvc/w-status", json={"spec": {"staticPlacement": {"locationLinks": links}}}))
        change = reader.changes(1)[0]
    assert change["type"] == "MODIFIED"
    assert change["object"]["version"] == 1  # the volume set itself was not written
    assert sorted(loc["name"] for loc in change["object"]["status"]["locations"]) == ["aws-us-east-2", "gcp-us-east1"]
    assert change["object"] == ok(api.get(f"/org/{org}/gvc/w-status/volumeset/data"))


def _policy(api: httpx.Client, org: str, name: str, account: str, links: list[str]) -> None:
    policy = {
        "name": name,
        "targetKind": "gvc",
        "targetLinks": links,
        "bindings": [{"permissions": ["view"], "principalLinks": [f"//serviceaccount/{account}"]}],
    }
    answer = api.put(f"/org/{org}/policy", json=policy)
    assert answer.status_code in (200, 201), answer.text


def test_a_watcher_sees_only_what_it_may_view_and_ends_with_403_when_the_right_goes(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    org = server.org
    key = service_account_with_key(api, org, unique)
    assert _watch(server, f"/org/{org}/gvc", key).status == 403  # no view on gvc at all
    _policy(api, org, unique, unique, [f"//gvc/{unique}-seen"])
    deadline = time.monotonic() + 30
    while (reader := _watch(server, f"/org/{org}/gvc", key)).status != 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    with reader:
        _gvc(api, org, f"{unique}-hidden")
        _gvc(api, org, f"{unique}-seen")
        seen = reader.changes(1)
        ok(api.delete(f"/org/{org}/policy/{unique}"), 202)
        ended = reader.rest()
    assert named(seen) == [("ADDED", f"{unique}-seen")]
    assert [e["type"] for e in ended if e["type"] != "BOOKMARK"] == ["ERROR"]
    assert ended[-1]["object"]["status"] == 403


def _granted_watch(server: ServerProcess, api: httpx.Client, account: str) -> tuple[str, WatchReader]:
    """A key of a new service account allowed to view one GVC, and its first open watch of GVCs
    (opened once the grant is known: the access generation is read every 0.5 s)."""
    key = service_account_with_key(api, server.org, account)
    _policy(api, server.org, account, account, [f"//gvc/{account}"])
    deadline = time.monotonic() + 30
    while (reader := _watch(server, f"/org/{server.org}/gvc", key)).status != 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    return key, reader


def test_a_revoked_key_ends_its_streams_with_401(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    org = server.org
    key, reader = _granted_watch(server, api, unique)
    with reader:
        reader.next()
        ok(api.patch(f"/org/{org}/serviceaccount/{unique}", json={"$drop/keys": [key.split(".")[0]]}))
        ended = reader.rest()
    assert ended[-1]["type"] == "ERROR" and ended[-1]["object"]["status"] == 401


def test_a_principal_holds_a_bounded_number_of_watches(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    org = server.org
    key, first = _granted_watch(server, api, unique)
    readers = [first] + [_watch(server, f"/org/{org}/gvc", key, wait_for_room=False) for _ in range(LIMIT - 1)]
    try:
        assert [r.status for r in readers] == [200] * LIMIT
        refused = _watch(server, f"/org/{org}/gvc", key, wait_for_room=False)
        assert refused.status == 429 and refused.error_body["code"] == "too_many_requests"
        assert _watch(server, f"/org/{org}/gvc").status == 200  # another principal is not held back
    finally:
        for reader in readers:
            reader.close()
    deadline = time.monotonic() + 30
    while (
        again := _watch(server, f"/org/{org}/gvc", key, wait_for_room=False)
    ).status != 200 and time.monotonic() < deadline:
        time.sleep(0.1)  # closed streams are released once the server notices the disconnect
    again.close()
    assert again.status == 200


def test_a_consumer_that_stops_reading_is_cut_off_with_an_error(server: ServerProcess, api: httpx.Client) -> None:
    org = server.org
    _gvc(api, org, "w-slow")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    host, port = server.url.removeprefix("http://").split(":")
    sock.connect((host, int(port)))
    path = f"/org/{org}/gvc?watch=true"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n\r\n".encode())
    big = {f"t{i}": "x" * 1000 for i in range(49)}
    try:
        time.sleep(0.3)
        with _watch(server, f"/org/{org}/gvc") as fast:
            for n in range(WRITES):
                ok(api.patch(f"/org/{org}/gvc/w-slow", json={"tags": {**big, "n": str(n)}}))
            fast_seen = fast.changes(WRITES)  # the other watcher got every change
        received = b""
        sock.settimeout(30)
        while not received.endswith(b"\r\n0\r\n\r\n"):  # the end of the chunked answer
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    assert [e["object"]["tags"]["n"] for e in fast_seen] == [str(n) for n in range(WRITES)]
    error_line = next(line for line in received.split(b"\n") if b'"type":"ERROR"' in line)
    error = orjson.loads(error_line[error_line.index(b"{") :])
    assert error["object"]["code"] == "watch_too_slow"


def test_a_server_shutdown_ends_streams_with_an_error(tmp_path_factory: pytest.TempPathFactory) -> None:
    stopping = serving("sqlite", tmp_path_factory.mktemp("watch-stop"))
    with stopping as proc, _watch(proc, f"/org/{proc.org}/gvc") as reader:
        reader.next()
        proc.stop()
        ended = reader.rest()
    assert ended[-1]["type"] == "ERROR" and ended[-1]["object"]["status"] == 503


def test_every_worker_delivers_the_writes_of_the_others(tmp_path_factory: pytest.TempPathFactory) -> None:
    """SQLite with 2 workers: each has its own hub, woken by the shared change counter; writes
    land on either worker and every watcher, on either, gets every one of them."""
    workers = serving("sqlite", tmp_path_factory.mktemp("watch-workers"), ("--workers", "2"))
    with workers as proc, proc.client() as api:
        api.headers["Connection"] = "close"  # a connection per write, so either worker answers
        readers = [_watch(proc, f"/org/{proc.org}/gvc") for _ in range(6)]  # the kernel spreads them
        try:
            for reader in readers:
                reader.next()
            for n in range(6):
                _gvc(api, proc.org, f"w-workers-{n}")
            seen = [named(reader.changes(6)) for reader in readers]
        finally:
            for reader in readers:
                reader.close()
    assert all(s == [("ADDED", f"w-workers-{n}") for n in range(6)] for s in seen)
