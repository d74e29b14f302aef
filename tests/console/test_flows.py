"""The console's main flows in a real browser: sign in, browse, sort, filter, page, open an item
with its tree, JSON and event log, follow a link, see errors, sign out (SQLite; one smoke test
on PostgreSQL, since the console only speaks the API)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.console import pages
from tests.console.accounts import viewer_key
from tests.support import pg
from tests.support.server import ServerProcess, start_server

GROUPS = 53  # more than one page of 50


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    """The server's API, with what the flows browse."""
    with server.client() as client:
        org = f"/org/{server.org}"
        for name, tags in (("main", {"team": "core"}), ("edge", {"team": "web"}), ("staging", {})):
            client.post(
                f"{org}/gvc", json={"name": name, "description": f"{name} GVC", "tags": tags}
            ).raise_for_status()
        workload = {
            "name": "web",
            "spec": {"containers": [{"name": "app", "image": "nginx:latest", "ports": [{"number": 8080}]}]},
        }
        client.post(f"{org}/gvc/main/workload", json=workload).raise_for_status()
        route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
        domain = {"name": "app.example.com", "spec": {"ports": [{"routes": [route]}]}}
        client.post(f"{org}/domain", json=domain).raise_for_status()
        client.patch(f"{org}/domain/app.example.com", json={"description": "the app"}).raise_for_status()
        for n in range(GROUPS):
            client.post(f"{org}/group", json={"name": f"team-{n:02d}"}).raise_for_status()
        yield client


def test_sign_in_lists_the_orgs_gvcs_and_every_kind(console: Any, server: ServerProcess) -> None:
    assert pages.rows(console) == ["edge", "main", "staging"]
    assert pages.session_key(console) == server.key
    assert server.key not in console.current_url
    kinds = httpx.get(f"{server.url}/console/kinds.json").json()["kinds"]
    linked = {a.get_attribute("data-kind") for a in console.find_elements(By.CSS_SELECTOR, "#kinds a")}
    # GVC-scoped kinds are links once a GVC is picked; every other kind is one now.
    assert linked == {k["name"] for k in kinds if k["scope"] != "gvc"}
    assert Select(pages.find(console, "#org-select")).first_selected_option.text == server.org
    pages.screenshot(console, "gvc-list")


def test_columns_sort_on_the_server(console: Any) -> None:
    pages.find(console, "button.sort[data-sort=name]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["staging", "main", "edge"])
    header = console.find_element(By.CSS_SELECTOR, "th[aria-sort=descending]")
    assert header.text.startswith("Name")
    pages.find(console, "button.sort[data-sort=description]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["edge", "main", "staging"])


def test_filters_by_name_and_by_tag(console: Any) -> None:
    pages.find(console, "#filter-name").send_keys("ai")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["main"])
    assert "matching the filter" in pages.wait_list(console)
    pages.find(console, "#filter-name").clear()
    pages.find(console, "#filter-tag").send_keys("team=web")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["edge"])
    pages.find(console, "#filter-tag").clear()
    pages.find(console, "#filter-tag").send_keys("team")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["edge", "main"])
    pages.find(console, "#filter-tag").send_keys("=nobody")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait_text(console, "#list-status", "No GVC items matching the filter.")


def test_the_org_list_and_the_gvc_picker(console: Any, server: ServerProcess) -> None:
    pages.find(console, "#kinds a[data-kind=org]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == [server.org])
    pages.find(console, "#filter-name").send_keys("nothing-like-it")
    pages.find(console, "#filters button[type=submit]").click()
    pages.wait_text(console, "#list-status", "No Org items matching the filter.")
    pages.go(console, f"#/org/{server.org}/gvc/main/workload")
    pages.wait(console).until(lambda d: pages.rows(d) == ["web"])
    Select(pages.find(console, "#gvc-select")).select_by_visible_text("edge")
    pages.wait_text(console, "#list-status", "No Workload items.")
    assert console.current_url.endswith(f"#/org/{server.org}/gvc/edge/workload")


def test_pages_follow_the_next_links(console: Any, server: ServerProcess) -> None:
    pages.find(console, "#kinds a[data-kind=group]").click()
    assert pages.wait_list(console, f"/org/{server.org}/group").startswith("Page 1: 50 items")
    first = pages.rows(console)
    assert pages.find(console, "#page-previous").get_attribute("disabled") is not None
    pages.find(console, "#page-next").click()
    pages.wait_text(console, "#list-status", "Page 2:")
    second = pages.rows(console)
    # The built-in groups (superusers, viewers) are listed too.
    assert len(first) + len(second) >= GROUPS and not set(first) & set(second)
    assert {f"team-{n:02d}" for n in range(GROUPS)} <= set(first) | set(second)
    assert pages.find(console, "#page-next").get_attribute("disabled") is not None
    pages.find(console, "#page-previous").click()
    pages.wait_text(console, "#list-status", "Page 1:")
    assert pages.rows(console) == first


def test_an_item_shows_its_tree_json_and_event_log_and_its_links_navigate(console: Any, server: ServerProcess) -> None:
    pages.find(console, "#kinds a[data-kind=domain]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["app.example.com"])
    console.find_element(By.LINK_TEXT, "app.example.com").click()
    pages.wait_text(console, "#summary", "the app")
    assert "/" in pages.text_of(console, "#spec")  # the route's prefix, as a tree
    pages.wait(console).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#events tbody tr")) == 2)
    changes = [row.text for row in console.find_elements(By.CSS_SELECTOR, "#events tbody tr td:nth-child(2)")]
    assert changes == ["created", "updated"]
    pages.screenshot(console, "domain")
    pages.find(console, "#json-view summary").click()
    assert '"name": "app.example.com"' in pages.text_of(console, "#json")

    workload_link = f"/org/{server.org}/gvc/main/workload/web"
    console.find_element(By.CSS_SELECTOR, f"#spec a[href='#{workload_link}']").click()
    pages.wait_text(console, "#view h1", "web")
    assert "nginx:latest" in pages.text_of(console, "#spec")
    assert console.current_url.endswith(f"/console#{workload_link}")
    # Arriving in a GVC picks it: its kinds are links now.
    assert Select(pages.find(console, "#gvc-select")).first_selected_option.text == "main"
    pages.find(console, "#kinds a[data-kind=workload]").click()
    pages.wait(console).until(lambda d: pages.rows(d) == ["web"])
    assert pages.violations(console) == []


def test_errors_are_said_in_the_consoles_words_with_the_servers_message(
    console: Any, browser: Any, server: ServerProcess
) -> None:
    pages.go(console, f"#/org/{server.org}/gvc/main/workload/nope")
    pages.wait_text(console, "#notice", "Could not open Workload nope:")
    notice = pages.text_of(console, "#notice")
    assert "HTTP 404, not_found" in notice and "Traceback" not in notice
    pages.submit_key(browser, server.url, "not-a-key")
    pages.wait_text(browser, "#notice", "Signing in failed: The credentials are not valid (HTTP 401")
    assert pages.session_key(browser) is None


def test_a_key_revoked_meanwhile_signs_the_console_out(browser: Any, server: ServerProcess, api: httpx.Client) -> None:
    org = f"/org/{server.org}"
    added = viewer_key(api, org, "console-viewer")
    pages.sign_in(browser, server.url, added["key"])
    assert pages.rows(browser) == ["edge", "main", "staging"]
    api.patch(f"{org}/serviceaccount/console-viewer", json={"$drop/keys": [added["name"]]}).raise_for_status()
    # The page's watch stream may sign the console out first (test_live.py), so no link to click.
    pages.go(browser, f"#{org}/domain")
    pages.wait_text(browser, "#notice", "The server no longer accepts this key; sign in again: ")
    assert "(HTTP 401, unauthorized" in pages.text_of(browser, "#notice")
    pages.find(browser, "#key-input")
    assert pages.session_key(browser) is None


def test_sign_out_forgets_the_key(console: Any, server: ServerProcess) -> None:
    pages.find(console, "#sign-out").click()
    pages.find(console, "#key-input")
    assert pages.session_key(console) is None
    assert console.execute_script("return window.sessionStorage.length;") == 0
    assert console.get_cookies() == []
    # Nothing of the key reached a URL or the server's log (the access log logs every path).
    assert server.key not in console.current_url
    assert server.key not in server.log_path.read_text().replace(f"  {server.key}\n", "", 1)
    pages.screenshot(console, "sign-in")
    console.refresh()
    pages.find(console, "#key-input")  # still signed out after a reload


@pytest.mark.postgres
def test_the_console_browses_a_postgresql_store(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    url = pg.create_database()
    try:
        process = start_server(Path(tmp_path_factory.mktemp("plinth-console-pg")), url)
        try:
            with process.client() as client:
                client.post(f"/org/{process.org}/gvc", json={"name": "on-postgres"}).raise_for_status()
            pages.sign_in(browser, process.url, process.key)
            assert pages.rows(browser) == ["on-postgres"]
        finally:
            process.stop()
    finally:
        pg.drop_database(url)
