"""Everything the API says is shown as text: names, descriptions, tags, spec values and error
messages that carry markup and script render literally, and nothing runs, nor is even tried
(no Content-Security-Policy violation is reported either)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.console import pages
from tests.support.server import ServerProcess

IMG = "<img src=x onerror=\"window.__pwned='{}'\">"
SCRIPT = "<script>window.__pwned='{}'</script>"
#: How many elements markup in the data would have made, and whether any script of it ran.
INJECTED = (
    "return {elements: document.querySelectorAll('#view img, #view script, #notice img, #notice script').length,"
    " pwned: window.__pwned === undefined ? null : String(window.__pwned)};"
)


@pytest.fixture(scope="module")
def hostile(server: ServerProcess) -> Iterator[httpx.Client]:
    """A GVC and a workload whose description, tags and spec values are markup and script."""
    with server.client() as client:
        org = f"/org/{server.org}"
        gvc = {"name": "xss", "description": IMG.format("gvc description"), "tags": {"note": SCRIPT.format("tag")}}
        client.post(f"{org}/gvc", json=gvc).raise_for_status()
        container = {
            "name": "app",
            "image": "nginx:latest",
            "env": [{"name": "GREETING", "value": IMG.format("env value")}],
            "args": [SCRIPT.format("arg")],
        }
        workload = {
            "name": "web",
            "description": SCRIPT.format("workload description"),
            "spec": {"containers": [container]},
        }
        client.post(f"{org}/gvc/xss/workload", json=workload).raise_for_status()
        yield client


def assert_nothing_ran(driver: Any) -> None:
    assert driver.execute_script(INJECTED) == {"elements": 0, "pwned": None}
    assert pages.violations(driver) == []


def test_markup_in_lists_items_and_json_is_shown_as_text(browser: Any, server: ServerProcess, hostile: Any) -> None:
    pages.sign_in(browser, server.url, server.key)
    pages.wait(browser).until(lambda d: "xss" in pages.rows(d))
    table = pages.text_of(browser, "#items")
    assert IMG.format("gvc description") in table and "note=" + SCRIPT.format("tag") in table
    assert_nothing_ran(browser)

    pages.go(browser, f"#/org/{server.org}/gvc/xss/workload/web")
    pages.wait_text(browser, "#summary", SCRIPT.format("workload description"))
    spec = pages.text_of(browser, "#spec")
    assert IMG.format("env value") in spec and SCRIPT.format("arg") in spec
    pages.find(browser, "#json-view summary").click()
    assert IMG.format("env value").replace('"', '\\"') in pages.text_of(browser, "#json")
    pages.screenshot(browser, "hostile-workload")
    assert_nothing_ran(browser)


def test_markup_in_an_error_message_is_shown_as_text(browser: Any, server: ServerProcess, hostile: Any) -> None:
    pages.sign_in(browser, server.url, server.key)
    name = "<img src=x onerror=window.__pwned=1>"
    pages.go(browser, f"#/org/{server.org}/gvc/xss/workload/{name}")
    pages.wait_text(browser, "#notice", "Could not open Workload <img src=x onerror=window.__pwned=1>:")
    assert_nothing_ran(browser)


def test_markup_through_a_template_an_edit_and_a_400_is_shown_as_text(
    browser: Any, server: ServerProcess, hostile: Any
) -> None:
    """Create from the template with markup in the values, see it on the item page and back in
    the editor, then send a field whose *name* is markup: the 400 names its path, shown as text."""
    org = f"/org/{server.org}"
    pages.sign_in(browser, server.url, server.key)
    pages.go(browser, f"#{org}/gvc/-create")
    area = pages.find(browser, "#yaml-editor")
    template = str(area.get_attribute("value"))
    text = template.replace("name: ''", "name: marked-up").replace(
        "description: ''", f"description: {json.dumps(SCRIPT.format('template description'))}"
    )
    text = text.replace("tags: {}", f"tags:\n  note: {json.dumps(IMG.format('template tag'))}")
    browser.execute_script("arguments[0].value = arguments[1];", area, text)
    pages.find(browser, "#edit-save").click()
    pages.wait_text(browser, "#summary", SCRIPT.format("template description"))
    assert IMG.format("template tag") in pages.text_of(browser, "#yaml")
    assert_nothing_ran(browser)

    pages.find(browser, "#edit-link").click()
    area = pages.find(browser, "#yaml-editor")
    edited = str(area.get_attribute("value"))
    assert SCRIPT.format("template description") in edited and IMG.format("template tag") in edited
    hostile_key = IMG.format("field name")
    edited = edited.replace("spec:", f"spec:\n  {json.dumps(hostile_key)}: 1", 1)
    browser.execute_script("arguments[0].value = arguments[1];", area, edited)
    pages.find(browser, "#edit-save").click()
    pages.wait_text(browser, "#problem-list", "unknown field")
    assert hostile_key in pages.text_of(browser, "#problem-list")
    assert_nothing_ran(browser)
    assert browser.execute_script("return document.querySelectorAll('#edit-problems img').length;") == 0
