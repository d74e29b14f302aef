"""The main flows with the keyboard only: Tab, Shift-Tab, Enter, Space and the arrows sent to
whatever has focus (no element is clicked). Sign in, pick a GVC, open a kind, sort, filter,
page, open an item, follow a link, sign out; the skip link; focus visible, and moved to the
page's heading after each route change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from tests.console import pages
from tests.console.pages import focused_is, press, tab_to
from tests.support.server import ServerProcess

GROUPS = 55  # more than one page of 50


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        org = f"/org/{server.org}"
        for name in ("edge", "main", "staging"):
            client.post(f"{org}/gvc", json={"name": name}).raise_for_status()
        workload = {"name": "web", "spec": {"containers": [{"name": "app", "image": "nginx:latest"}]}}
        client.post(f"{org}/gvc/main/workload", json=workload).raise_for_status()
        route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
        client.post(f"{org}/domain", json={"name": "app.example.com", "spec": {"ports": [{"routes": [route]}]}})
        for n in range(GROUPS):
            client.post(f"{org}/group", json={"name": f"team-{n:02d}"}).raise_for_status()
        yield client


@pytest.fixture
def signed_out(browser: Any, server: ServerProcess, api: httpx.Client) -> Iterator[Any]:
    pages.open_console(browser, server.url)
    browser.execute_script("window.sessionStorage.clear(); window.location.hash = '';")
    browser.refresh()
    pages.find(browser, "#key-input")
    pages.script_errors(browser)
    yield browser
    assert pages.script_errors(browser) == []


def _outline(driver: Any) -> tuple[str, float]:
    style = driver.execute_script(
        "const s = getComputedStyle(document.activeElement); return [s.outlineStyle, parseFloat(s.outlineWidth)];"
    )
    return str(style[0]), float(style[1])


def _heading_has_focus(driver: Any, text: str) -> None:
    pages.wait(driver).until(lambda d: focused_is(d, "#view h1") and text in pages.focused(d).text)


def test_the_main_flows_by_keyboard_only(signed_out: Any, server: ServerProcess) -> None:
    driver, org = signed_out, server.org
    # Sign in: the page puts focus in the key field.
    assert focused_is(driver, "#key-input")
    press(driver, server.key, Keys.ENTER)
    pages.wait_list(driver)
    _heading_has_focus(driver, "GVC")  # landed in the content

    # Pick a GVC with the arrows: focus stays in the picker while the kinds follow it.
    tab_to(driver, "#gvc-select", back=True)
    assert _outline(driver)[0] != "none"
    while Select(pages.focused(driver)).first_selected_option.text != "main":
        press(driver, Keys.ARROW_DOWN)
    pages.find(driver, "#kinds a[data-kind=workload]")
    assert focused_is(driver, "#gvc-select")

    # Open a kind.
    tab_to(driver, "#kinds a[data-kind=workload]")
    style, width = _outline(driver)
    assert style != "none" and width >= 2  # focus is visible
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: pages.rows(d) == ["web"])
    _heading_has_focus(driver, "Workload")

    # Sort: the header's button keeps focus across the redraw.
    tab_to(driver, "#kinds a[data-kind=group]", back=True)
    press(driver, Keys.ENTER)
    assert pages.wait_list(driver, f"/org/{org}/group").startswith("Page 1: 50 items")
    tab_to(driver, "button.sort[data-sort=name]")
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: pages.rows(d)[0] == "viewers")
    assert focused_is(driver, "button.sort[data-sort=name]")
    press(driver, " ")  # Space presses a button too: ascending again
    pages.wait(driver).until(lambda d: pages.rows(d)[0] == "superusers")
    assert focused_is(driver, "button.sort[data-sort=name]")

    # Page forth and back.
    tab_to(driver, "#page-next")
    press(driver, Keys.ENTER)
    pages.wait_text(driver, "#list-status", "Page 2:")
    assert pages.rows(driver)[-2:] == ["team-54", "viewers"]
    tab_to(driver, "#page-previous", back=True)
    press(driver, Keys.ENTER)
    pages.wait_text(driver, "#list-status", "Page 1:")

    # Filter by name with Enter in the field.
    tab_to(driver, "#filter-name", back=True)
    press(driver, "team-5", Keys.ENTER)
    pages.wait(driver).until(lambda d: pages.rows(d) == [f"team-5{n}" for n in range(5)])
    assert focused_is(driver, "#filter-name")

    # Open an item and follow its link.
    tab_to(driver, "#kinds a[data-kind=domain]", back=True)
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: pages.rows(d) == ["app.example.com"])
    tab_to(driver, "#items tbody a")
    press(driver, Keys.ENTER)
    _heading_has_focus(driver, "app.example.com")
    workload = f"/org/{org}/gvc/main/workload/web"
    tab_to(driver, f"#spec a[href='#{workload}']")
    press(driver, Keys.ENTER)
    _heading_has_focus(driver, "web")
    assert driver.current_url.endswith(f"#{workload}")

    # Sign out.
    tab_to(driver, "#sign-out", back=True)
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: focused_is(d, "#key-input"))
    assert pages.session_key(driver) is None


def test_the_skip_link_is_first_and_lands_in_the_content(signed_out: Any, server: ServerProcess) -> None:
    driver = signed_out
    pages.sign_in(driver, server.url, server.key)
    driver.refresh()  # a fresh page: focus at the start of the document
    pages.wait_list(driver)
    assert focused_is(driver, "body")  # a fresh page leaves focus at its top
    press(driver, Keys.TAB)
    assert focused_is(driver, "a.skip")
    skip = pages.focused(driver)
    assert skip.text == "Skip to content" and skip.is_displayed() and skip.location["y"] >= 0
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: focused_is(d, "#view h1"))
    assert driver.current_url.endswith(f"#/org/{server.org}/gvc")  # the route did not change
    press(driver, Keys.TAB)  # the next stop is in the content, not back in the header
    assert driver.execute_script("return document.getElementById('main').contains(document.activeElement);")


def test_the_sign_in_choice_by_keyboard(browser: Any, oidc_server: ServerProcess) -> None:
    """On a server with an issuer, the arrows choose the ID token form and Tab reaches its fields."""
    pages.open_console(browser, oidc_server.url)
    browser.execute_script("window.sessionStorage.clear(); window.location.hash = '';")
    browser.refresh()
    pages.find(browser, "#method-key")
    tab_to(browser, "#method-key", back=True)
    press(browser, Keys.ARROW_RIGHT)
    assert focused_is(browser, "#method-token")
    pages.find(browser, "#token-org")
    tab_to(browser, "#token-org")
    press(browser, Keys.TAB)
    assert focused_is(browser, "#token-input")


def test_create_edit_and_delete_with_the_keyboard_only(
    signed_out: Any, server: ServerProcess, api: httpx.Client
) -> None:
    """Create a group from its template, edit it as YAML and delete it after typing its name:
    Tab, typing and Enter only. The editor's textarea does not trap Tab."""
    driver = signed_out
    org = f"/org/{server.org}"
    press(driver, server.key, Keys.ENTER)
    pages.wait_list(driver)
    pages.go(driver, f"#{org}/group")
    pages.wait_list(driver, f"{org}/group")
    tab_to(driver, "#create-link")
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: focused_is(d, "#yaml-editor"))  # the caret waits on the name
    press(driver, "keyed")
    tab_to(driver, "#edit-save")
    press(driver, Keys.ENTER)
    pages.wait_text(driver, "#summary", "keyed")
    assert api.get(f"{org}/group/keyed").json()["version"] == 1

    tab_to(driver, "#edit-link")
    press(driver, Keys.ENTER)
    pages.wait(driver).until(lambda d: "name: keyed" in (pages.find(d, "#yaml-editor").get_attribute("value") or ""))
    tab_to(driver, "#yaml-editor")
    # The whole document typed anew (a PUT replaces the item): select all, then type over it.
    ActionChains(driver).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).perform()
    press(driver, "name: keyed", Keys.ENTER, "description: typed by keys", Keys.ENTER)
    tab_to(driver, "#edit-save")
    press(driver, Keys.ENTER)
    pages.wait_text(driver, "#summary", "typed by keys")
    assert api.get(f"{org}/group/keyed").json()["version"] == 2

    tab_to(driver, "#delete-open")
    press(driver, Keys.ENTER)
    assert focused_is(driver, "#delete-name")
    press(driver, "keye", Keys.ENTER)  # not the name: Enter deletes nothing
    assert api.get(f"{org}/group/keyed").status_code == 200
    press(driver, "d", Keys.ENTER)
    pages.wait(driver).until(lambda d: d.current_url.endswith(f"/console#{org}/group"))
    pages.wait_list(driver, f"{org}/group")
    assert api.get(f"{org}/group/keyed").status_code == 404
