"""Live updates in a real browser: changes made through the API and the real CLI appear in an
open list and item page without a reload; leaving a page ends its watch stream (the server's
``plinth_watchers`` gauge says so); a stream cut by a server restart resumes from the last
version it saw; the query builder's terms, match any, and the server's 400 for a bad term
(SQLite; one live smoke test on PostgreSQL)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.cli.conftest import PlinthCli
from tests.console import pages
from tests.console.accounts import viewer_key
from tests.support import pg
from tests.support.server import ServerProcess, free_port, start_server
from tests.support.tcpproxy import TcpProxy
from tests.support.watching import WatchReader

#: Records every URL the console fetches from the moment it is installed (the watch's
#: ``resourceVersion`` shows in it): the page's own ``fetch``, wrapped, still does the work.
RECORD_FETCHES = (
    "if (!window.__fetched) { window.__fetched = []; const original = window.fetch;"
    " window.fetch = (url, init) => { window.__fetched.push(String(url)); return original(url, init); }; }"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """This module's server publishes /metrics, to count its open watch streams."""
    process = start_server(tmp_path_factory.mktemp("plinth-console-live"), extra_args=("--metrics-public",))
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        org = f"/org/{server.org}"
        client.post(f"{org}/gvc", json={"name": "main"}).raise_for_status()
        for name, tags in (("qb-red", {"color": "red"}), ("qb-blue", {"color": "blue"}), ("qb-plain", {})):
            client.post(f"{org}/group", json={"name": name, "tags": tags}).raise_for_status()
        yield client


@pytest.fixture
def cli(server: ServerProcess, tmp_path: Path) -> PlinthCli:
    return PlinthCli(home=tmp_path, endpoint=server.url, token=server.key)


def watchers(server: ServerProcess) -> float:
    text = httpx.get(f"{server.url}/metrics").text
    found = [s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == "plinth_watchers"]
    return sum(found)


def wait_watchers(server: ServerProcess, count: int) -> None:
    """Until the server counts ``count`` open watch streams (its gauge is flushed every second)."""
    deadline = time.monotonic() + pages.WAIT_S
    while watchers(server) != count:
        assert time.monotonic() < deadline, f"the server counts {watchers(server)} watch streams, not {count}"
        time.sleep(0.2)


def wait_live(driver: Any) -> None:
    pages.wait(driver).until(lambda d: d.find_element(By.ID, "live").text == "Live")


def open_list(driver: Any, route: str) -> None:
    pages.go(driver, route)
    pages.wait_list(driver, route.removeprefix("#"))
    wait_live(driver)


def test_a_list_follows_writes_made_through_the_api_and_the_cli(
    console: Any, server: ServerProcess, api: httpx.Client, cli: PlinthCli
) -> None:
    org = f"/org/{server.org}"
    open_list(console, f"#{org}/group")
    assert "live-api" not in pages.rows(console)
    assert pages.find(console, "#live").get_attribute("aria-live") == "polite"
    api.post(f"{org}/group", json={"name": "live-api", "description": "first"}).raise_for_status()
    pages.wait(console).until(lambda d: "live-api" in pages.rows(d))
    api.patch(f"{org}/group/live-api", json={"description": "patched by the API"}).raise_for_status()
    pages.wait_text(console, "#items", "patched by the API")

    made = cli("rest", "create", f"{org}/group", "-f", "-", stdin="name: live-cli\ndescription: made by the CLI\n")
    assert made.code == 0, made.stderr
    pages.wait(console).until(lambda d: "live-cli" in pages.rows(d))
    patched = cli("rest", "patch", f"{org}/group/live-cli", "-f", "-", stdin="description: patched by the CLI\n")
    assert patched.code == 0, patched.stderr
    pages.wait_text(console, "#items", "patched by the CLI")
    gone = cli("rest", "delete", f"{org}/group/live-cli")
    assert gone.code == 0, gone.stderr
    pages.wait(console).until(lambda d: "live-cli" not in pages.rows(d))
    api.delete(f"{org}/group/live-api").raise_for_status()
    pages.wait(console).until(lambda d: "live-api" not in pages.rows(d))
    assert pages.rows(console) == sorted(pages.rows(console))  # still in the page's order

    # A GVC's workloads: a new one appears, a deleted one goes.
    open_list(console, f"#{org}/gvc/main/workload")
    workload = {"name": "live-web", "spec": {"containers": [{"name": "app", "image": "nginx:latest"}]}}
    api.post(f"{org}/gvc/main/workload", json=workload).raise_for_status()
    pages.wait(console).until(lambda d: pages.rows(d) == ["live-web"])
    api.delete(f"{org}/gvc/main/workload/live-web").raise_for_status()
    pages.wait_text(console, "#list-status", "No Workload items.")


def test_an_item_page_follows_its_item_and_says_when_it_is_deleted(
    console: Any, server: ServerProcess, api: httpx.Client, cli: PlinthCli
) -> None:
    org = f"/org/{server.org}"
    api.post(f"{org}/group", json={"name": "followed", "description": "as created"}).raise_for_status()
    pages.go(console, f"#{org}/group/followed")
    pages.wait_text(console, "#summary", "as created")
    wait_live(console)
    patched = cli("rest", "patch", f"{org}/group/followed", "-f", "-", stdin="description: changed elsewhere\n")
    assert patched.code == 0, patched.stderr
    pages.wait_text(console, "#summary", "changed elsewhere")
    assert "2" in pages.text_of(console, "#summary")  # its version
    assert console.find_elements(By.ID, "item-gone") == []
    api.delete(f"{org}/group/followed").raise_for_status()
    pages.wait_text(console, "#item-gone", "This Group was deleted elsewhere")
    assert "changed elsewhere" in pages.text_of(console, "#summary")  # its last state, still shown
    pages.screenshot(console, "item-deleted-elsewhere")


def test_leaving_a_page_ends_its_watch_stream(console: Any, server: ServerProcess) -> None:
    org = f"/org/{server.org}"
    for route in (f"#{org}/group", f"#{org}/gvc", f"#{org}/policy", f"#{org}/gvc/main/workload", f"#{org}/group"):
        open_list(console, route)
    pages.go(console, f"#{org}/group/qb-red")
    pages.wait_text(console, "#summary", "qb-red")
    wait_live(console)
    wait_watchers(server, 1)  # six pages visited, one stream open: the last page's
    time.sleep(2)  # two flushes later, still one
    assert watchers(server) == 1
    pages.find(console, "#sign-out").click()
    pages.find(console, "#key-input")
    wait_watchers(server, 0)


def test_a_key_revoked_while_a_page_is_open_signs_out_by_itself(
    browser: Any, server: ServerProcess, api: httpx.Client
) -> None:
    """No click needed: the page's stream ends with ERROR 401, which signs the console out."""
    org = f"/org/{server.org}"
    added = viewer_key(api, org, "live-viewer")
    pages.sign_in(browser, server.url, added["key"])
    wait_live(browser)
    api.patch(f"{org}/serviceaccount/live-viewer", json={"$drop/keys": [added["name"]]}).raise_for_status()
    pages.wait_text(browser, "#notice", "The server no longer accepts this key; sign in again: ")
    assert "(HTTP 401, unauthorized" in pages.text_of(browser, "#notice")
    pages.find(browser, "#key-input")
    assert pages.session_key(browser) is None


def test_a_right_taken_away_stops_the_stream_and_says_so(
    browser: Any, server: ServerProcess, api: httpx.Client
) -> None:
    """The key still signs in, but no policy lets it view groups any more: ERROR 403."""
    org = f"/org/{server.org}"
    added = viewer_key(api, org, "live-dropped")
    pages.sign_in(browser, server.url, added["key"])
    open_list(browser, f"#{org}/group")
    api.patch(
        f"{org}/group/viewers", json={"$drop/memberLinks": [f"{org}/serviceaccount/live-dropped"]}
    ).raise_for_status()
    pages.wait_text(browser, "#notice", "Live updates stopped: ")
    assert "(HTTP 403, forbidden" in pages.text_of(browser, "#notice")
    assert pages.text_of(browser, "#live") == "Not live"
    assert pages.session_key(browser) == added["key"]  # still signed in: only the stream stopped


def add_term(driver: Any, what: str, name: str, op: str, value: str) -> None:
    pages.find(driver, "#query-add").click()
    row = driver.find_elements(By.CSS_SELECTOR, "#query-terms li")[-1]
    # The new row's first control has the focus: the builder is driven from the keyboard.
    assert driver.switch_to.active_element == row.find_element(By.CSS_SELECTOR, ".q-what")
    Select(row.find_element(By.CSS_SELECTOR, ".q-what")).select_by_value(what)
    row.find_element(By.CSS_SELECTOR, ".q-name").send_keys(name)
    Select(row.find_element(By.CSS_SELECTOR, ".q-op")).select_by_value(op)
    if value:
        row.find_element(By.CSS_SELECTOR, ".q-value").send_keys(value)


def test_the_query_builder_with_a_property_and_a_tag_term_matching_any(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    org = f"/org/{server.org}"
    open_list(console, f"#{org}/group")
    add_term(console, "property", "name", "=", "qb-plain")
    add_term(console, "tag", "color", "=", "red")
    labels = [e.get_attribute("aria-label") for e in console.find_elements(By.CSS_SELECTOR, "#query-terms input")]
    assert labels == ["Term 1: name", "Term 1: value", "Term 2: name", "Term 2: value"]
    Select(pages.find(console, "#query-match")).select_by_value("any")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["qb-plain", "qb-red"])
    assert "matching the filter" in pages.wait_list(console)
    Select(pages.find(console, "#query-match")).select_by_value("all")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait_text(console, "#list-status", "No Group items matching the filter.")
    Select(pages.find(console, "#query-match")).select_by_value("any")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["qb-plain", "qb-red"])
    # The live page keeps to the query: a new red group appears, a blue one does not.
    api.post(f"{org}/group", json={"name": "qb-blue-2", "tags": {"color": "blue"}}).raise_for_status()
    api.post(f"{org}/group", json={"name": "qb-red-2", "tags": {"color": "red"}}).raise_for_status()
    pages.wait(console).until(lambda d: pages.rows(d) == ["qb-plain", "qb-red", "qb-red-2"])
    # A term taken away: its row goes, and the query without it applies.
    console.find_elements(By.CSS_SELECTOR, "#query-terms .q-remove")[0].click()
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["qb-red", "qb-red-2"])
    pages.screenshot(console, "query-builder")


def test_a_later_page_emptied_by_deletions_elsewhere_steps_back_to_the_page_before(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    org = f"/org/{server.org}"
    names = [f"step-{n:02}" for n in range(52)]  # 50 on page 1, 2 on page 2
    for name in names:
        api.post(f"{org}/group", json={"name": name}).raise_for_status()
    try:
        open_list(console, f"#{org}/group")
        pages.find(console, "#filter-name").send_keys("step-")
        pages.find(console, "#filters button[type=submit]").click()
        pages.wait_text(console, "#list-status", "Page 1: 50 items matching the filter, more on the next page")
        pages.find(console, "#page-next").click()
        pages.wait(console).until(lambda d: pages.rows(d) == names[50:])
        for name in names[50:]:
            api.delete(f"{org}/group/{name}").raise_for_status()
        pages.wait(console).until(lambda d: pages.rows(d) == names[:50])
        assert pages.wait_list(console) == "Page 1: 50 items matching the filter"
        assert pages.find(console, "#page-next").get_attribute("disabled") is not None
    finally:
        for name in names:
            api.delete(f"{org}/group/{name}")


def test_a_bad_term_shows_the_servers_400_naming_the_term(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    open_list(console, f"#/org/{server.org}/group")
    add_term(console, "property", "name", "contains", "qb")
    add_term(console, "property", "name", "~", "([")
    pages.find(console, "#filters button[type=submit]").click()
    refused = "The query was refused: property name ~ ([: value: not a valid regular expression"
    pages.wait_text(console, "#notice", refused)
    assert "(HTTP 400, invalid" in pages.text_of(console, "#notice")
    bad = console.find_elements(By.CSS_SELECTOR, "#query-terms li")[1]
    assert bad.get_attribute("aria-invalid") == "true"
    assert "not a valid regular expression" in bad.find_element(By.CSS_SELECTOR, ".q-problem").text
    assert console.find_elements(By.CSS_SELECTOR, "#query-terms li")[0].get_attribute("aria-invalid") is None
    bad.find_element(By.CSS_SELECTOR, ".q-remove").click()
    pages.find(console, "#filters button[type=submit]").click()
    names = [g["name"] for g in api.get(f"/org/{server.org}/group").json()["items"]]
    expected = sorted(n for n in names if "qb" in n)
    assert {"qb-blue", "qb-plain", "qb-red"} <= set(expected)
    pages.wait(console).until(lambda d: pages.rows(d) == expected)


def test_a_stream_cut_by_a_restart_resumes_from_the_last_version(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data_dir = Path(tmp_path_factory.mktemp("plinth-console-restart"))
    port = free_port()
    first = start_server(data_dir, port=port)
    try:
        with first.client() as client:
            client.post(f"/org/{first.org}/group", json={"name": "before"}).raise_for_status()
        pages.sign_in(browser, first.url, first.key)
        open_list(browser, f"#/org/{first.org}/group")
        browser.execute_script(RECORD_FETCHES)
    finally:
        first.stop()  # SIGTERM: the server ends its streams (ERROR 503) and goes
    pages.wait(browser).until(lambda d: d.find_element(By.ID, "live").text == "Reconnecting…")
    # The server said why before it went: in the console's words, then its own.
    pages.wait_text(browser, "#notice", "Live updates are interrupted; reconnecting: ")
    assert "(HTTP 503" in pages.text_of(browser, "#notice")
    second = start_server(data_dir, port=port)
    try:
        with second.client() as client:
            client.post(f"/org/{second.org}/group", json={"name": "after"}).raise_for_status()
        pages.wait(browser).until(lambda d: "after" in pages.rows(d))
        wait_live(browser)
        fetched = browser.execute_script("return window.__fetched;")
        resumed = [url for url in fetched if "watch=true&resourceVersion=" in url]
        assert resumed, fetched  # it asked for what followed the version it had, not for now
        assert not browser.find_element(By.ID, "notice").is_displayed()  # live again: the notice went
        assert pages.script_errors(browser) == []
    finally:
        second.stop()


def test_a_stream_resumed_too_late_starts_over_and_loads_the_page_again(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The network between the browser and the server drops (a proxy resets every connection
    and refuses new ones) while the change log, kept short here, moves past the version the
    console holds: back online, its resume is a 410 ``list_again``, so it watches from now and
    loads the page again."""
    retention = ("--watch-retention-count", "1", "--watch-trim-interval", "1")
    process = start_server(Path(tmp_path_factory.mktemp("plinth-console-410")), extra_args=retention)
    try:
        with TcpProxy("127.0.0.1", int(process.url.rsplit(":", 1)[1])) as proxy:
            pages.sign_in(browser, f"http://127.0.0.1:{proxy.port}", process.key)
            open_list(browser, f"#/org/{process.org}/group")
            browser.execute_script(RECORD_FETCHES)
            held = current_version(process)
            proxy.refuse()
            pages.wait(browser).until(lambda d: d.find_element(By.ID, "live").text == "Reconnecting…")
            with process.client() as client:
                for name in ("late-1", "late-2", "late-3"):
                    client.post(f"/org/{process.org}/group", json={"name": name}).raise_for_status()
            wait_trimmed_past(process, held)
            proxy.restore()
            pages.wait(browser).until(lambda d: {"late-1", "late-2", "late-3"} <= set(pages.rows(d)))
            wait_live(browser)
            watches = [u for u in browser.execute_script("return window.__fetched;") if "watch=true" in u]
            assert "resourceVersion=" in watches[0] and "resourceVersion=" not in watches[-1], watches
            # Two 410s: the one that told the test the log was trimmed, and the console's. The
            # access log writes its lines up to 0.2 s late, and the page can be live again sooner.
            refused = _logged_410s(process, at_least=2)
            assert len(refused) == 2 and all(f'"path":"/org/{process.org}/group"' in line for line in refused)
            assert pages.script_errors(browser) == []
    finally:
        process.stop()


def test_a_watch_the_server_refuses_is_said_and_retried(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """One watch per key here (``--watch-limit 1``), and the test holds it: the console's is a
    429, said in its words and the server's, and retried until the test lets go."""
    # Bookmarks every second: the server notices the test's watch gone at its next write.
    limits = ("--watch-limit", "1", "--watch-bookmark-interval", "1")
    process = start_server(Path(tmp_path_factory.mktemp("plinth-console-429")), extra_args=limits)
    try:
        held = WatchReader(process.url, f"/org/{process.org}/gvc", process.key)
        try:
            assert held.status == 200
            pages.sign_in(browser, process.url, process.key)
            pages.wait_text(browser, "#notice", "Live updates are interrupted; reconnecting: At most 1 open watches")
            assert "(HTTP 429, too_many_requests" in pages.text_of(browser, "#notice")
            assert pages.text_of(browser, "#live") == "Reconnecting…"
        finally:
            held.close()
        # Its retries back off (1 s, 2 s, 4 s, ... up to 30 s): the next one finds the way clear.
        WebDriverWait(browser, 45).until(lambda d: d.find_element(By.ID, "live").text == "Live")
        assert not browser.find_element(By.ID, "notice").is_displayed()
        assert pages.script_errors(browser) == []
    finally:
        process.stop()


def current_version(server: ServerProcess) -> str:
    """The version a watch opened now starts from (its first bookmark; opaque, docs/watch.md)."""
    with server.client() as client, client.stream("GET", f"/org/{server.org}/group?watch=true") as answer:
        return str(json.loads(next(answer.iter_lines()))["resourceVersion"])


def _logged_410s(server: ServerProcess, at_least: int) -> list[str]:
    """The access log's 410 lines, once there are ``at_least`` of them (or the wait's end)."""
    deadline = time.monotonic() + pages.WAIT_S
    while True:
        refused = [line for line in server.log_lines() if '"status":410' in line]
        if len(refused) >= at_least or time.monotonic() > deadline:
            return refused
        time.sleep(0.1)


def wait_trimmed_past(server: ServerProcess, version: str) -> None:
    """Until resuming after ``version`` is a 410 (the change log was trimmed past it)."""
    deadline = time.monotonic() + pages.WAIT_S
    with server.client() as client:
        while True:
            path = f"/org/{server.org}/group?watch=true&resourceVersion={version}"
            with client.stream("GET", path) as answer:
                if answer.status_code == 410:
                    return
            assert time.monotonic() < deadline, "the change log was never trimmed"
            time.sleep(0.2)


@pytest.mark.postgres
def test_a_list_is_live_on_a_postgresql_store(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    url = pg.create_database()
    try:
        process = start_server(Path(tmp_path_factory.mktemp("plinth-console-live-pg")), url)
        try:
            pages.sign_in(browser, process.url, process.key)
            open_list(browser, f"#/org/{process.org}/group")
            with process.client() as client:
                client.post(f"/org/{process.org}/group", json={"name": "live-on-postgres"}).raise_for_status()
                pages.wait(browser).until(lambda d: "live-on-postgres" in pages.rows(d))
                client.delete(f"/org/{process.org}/group/live-on-postgres").raise_for_status()
                pages.wait(browser).until(lambda d: "live-on-postgres" not in pages.rows(d))
        finally:
            process.stop()
    finally:
        pg.drop_database(url)
