"""An automated accessibility check (axe-core, pinned, injected by the test) of the console's
main pages at 1280 and 390 px: no violation of impact serious or critical (the others are
printed), and no page wider than the window (no horizontal page scroll). Screenshots of each
page at each width go to build/console-screenshots/; the main flows at 390 px."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from selenium.webdriver.support.ui import Select

from tests.console import pages
from tests.support.server import ServerProcess


@pytest.fixture(scope="module")
def api(oidc_server: ServerProcess) -> Iterator[httpx.Client]:
    with oidc_server.client() as client:
        org = f"/org/{oidc_server.org}"
        client.post(f"{org}/gvc", json={"name": "main", "description": "the main GVC", "tags": {"team": "core"}})
        workload = {"name": "web", "spec": {"containers": [{"name": "app", "image": "nginx:latest"}]}}
        client.post(f"{org}/gvc/main/workload", json=workload).raise_for_status()
        route = {"prefix": "/", "workloadLink": "//gvc/main/workload/web"}
        domain = {"name": "app.example.com", "description": "the app", "spec": {"ports": [{"routes": [route]}]}}
        client.post(f"{org}/domain", json=domain).raise_for_status()
        secret = {"name": "db-password", "type": "opaque", "data": {"payload": "hunter2", "encoding": "plain"}}
        client.post(f"{org}/secret", json=secret).raise_for_status()
        yield client


@pytest.fixture
def wide_then_back(browser: Any) -> Iterator[Any]:
    yield browser
    pages.set_width(browser, pages.WIDE)


def _check(driver: Any, page: str, width: int, found: dict[str, list[dict[str, Any]]]) -> None:
    pages.screenshot(driver, f"{page}-{width}")
    assert pages.page_overflow(driver) <= 0, f"{page} at {width} px scrolls sideways"
    bad = pages.serious(pages.axe(driver))
    if bad:
        found[f"{page} at {width} px"] = bad


def _assert_none(found: dict[str, list[dict[str, Any]]]) -> None:
    assert found == {}, "\n".join(
        f"{page}: {v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
        for page, bad in found.items()
        for v in bad
    )


@pytest.mark.parametrize("width", [pages.WIDE, pages.NARROW])
def test_the_main_pages_have_no_serious_or_critical_violation(
    wide_then_back: Any, oidc_server: ServerProcess, api: httpx.Client, width: int
) -> None:
    driver = wide_then_back
    pages.set_width(driver, width)
    found: dict[str, list[dict[str, Any]]] = {}
    pages.open_console(driver, oidc_server.url)
    driver.execute_script("window.sessionStorage.clear(); window.location.hash = '';")
    driver.refresh()
    pages.find(driver, "#key-input")
    pages.find(driver, "#method-token")  # the server has an issuer: both choices are offered
    _check(driver, "sign-in", width, found)
    pages.find(driver, "#method-token").click()
    pages.find(driver, "#token-org")
    _check(driver, "sign-in-id-token", width, found)
    pages.sign_in(driver, oidc_server.url, oidc_server.key)
    _check(driver, "gvc-list", width, found)
    if width == pages.NARROW:
        pages.find(driver, "#kinds-toggle").click()
        pages.find(driver, "#kinds a[data-kind=domain]")
        _check(driver, "kinds-open", width, found)
    pages.go(driver, f"#/org/{oidc_server.org}/domain")
    pages.wait(driver).until(lambda d: pages.rows(d) == ["app.example.com"])
    _check(driver, "domain-list", width, found)
    pages.go(driver, f"#/org/{oidc_server.org}/domain/app.example.com")
    pages.wait(driver).until(lambda d: len(d.find_elements("css selector", "#events tbody tr")) == 1)
    _check(driver, "domain", width, found)
    pages.go(driver, f"#/org/{oidc_server.org}/gvc/main/workload/web")
    pages.wait_text(driver, "#spec", "nginx:latest")
    _check(driver, "workload", width, found)
    pages.go(driver, f"#/org/{oidc_server.org}/gvc/main/workload/nope")
    pages.wait_text(driver, "#notice", "Could not open Workload nope")
    _check(driver, "error", width, found)
    _assert_none(found)


def _set_editor(driver: Any, text: str) -> None:
    area = pages.find(driver, "#yaml-editor")
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", area, text
    )


def _editor_text(driver: Any) -> str:
    return str(pages.find(driver, "#yaml-editor").get_attribute("value"))


@pytest.mark.parametrize("width", [pages.WIDE, pages.NARROW])
def test_the_write_and_query_pages_have_no_serious_or_critical_violation(
    wide_then_back: Any, oidc_server: ServerProcess, api: httpx.Client, width: int
) -> None:
    """The editor (a template, a 400 beside its paths, a YAML parse error, a conflict), the
    delete confirmation, a revealed secret, and the query builder with a refused term."""
    driver = wide_then_back
    pages.set_width(driver, width)
    org = f"/org/{oidc_server.org}"
    found: dict[str, list[dict[str, Any]]] = {}
    pages.sign_in(driver, oidc_server.url, oidc_server.key)
    pages.go(driver, f"#{org}/gvc/-create")
    pages.find(driver, "#yaml-editor")
    _check(driver, "create-editor", width, found)
    pages.go(driver, f"#{org}/gvc/main/workload/web/-edit")
    text = _editor_text(driver)
    _set_editor(driver, text + "nonsense: true\n")
    pages.find(driver, "#edit-save").click()
    pages.find(driver, "#problem-list")
    _check(driver, "edit-400", width, found)
    _set_editor(driver, "name: [unclosed\n")
    pages.find(driver, "#edit-save").click()
    pages.find(driver, "#parse-error")
    _check(driver, "edit-parse-error", width, found)
    pages.go(driver, f"#{org}/gvc/main/-edit")
    pages.find(driver, "#yaml-editor")
    api.patch(f"{org}/gvc/main", json={"description": f"changed elsewhere at {width}"}).raise_for_status()
    pages.find(driver, "#edit-save").click()
    pages.find(driver, "#conflict")
    _check(driver, "conflict", width, found)
    pages.go(driver, f"#{org}/domain/app.example.com")
    pages.find(driver, "#delete-open").click()
    pages.find(driver, "#delete-name").send_keys("app")
    _check(driver, "delete-confirm", width, found)
    pages.go(driver, f"#{org}/secret/db-password")
    pages.find(driver, "#reveal").click()
    pages.wait_text(driver, "#secret-revealed", "hunter2")
    _check(driver, "secret-revealed", width, found)
    pages.go(driver, f"#{org}/domain")
    pages.wait(driver).until(lambda d: pages.rows(d) == ["app.example.com"])
    pages.find(driver, "#query-add").click()
    driver.find_elements("css selector", "#query-terms .q-name")[-1].send_keys("name")
    Select(driver.find_elements("css selector", "#query-terms .q-op")[-1]).select_by_value("~")
    driver.find_elements("css selector", "#query-terms .q-value")[-1].send_keys("([")
    pages.find(driver, "#filters button[type=submit]").click()
    pages.wait_text(driver, "#notice", "The query was refused")
    pages.wait_text(driver, "#live", "Live")
    _check(driver, "query-refused", width, found)
    _assert_none(found)


def test_axe_finds_what_it_should(browser: Any, oidc_server: ServerProcess) -> None:
    """The check can fail: a button without a name and an unlabelled field are serious."""
    pages.sign_in(browser, oidc_server.url, oidc_server.key)
    browser.execute_script(
        "const v = document.getElementById('view');"
        "v.append(document.createElement('button'), document.createElement('input'));"
    )
    ids = {v["id"] for v in pages.serious(pages.axe(browser))}
    assert {"button-name", "label"} <= ids
    browser.refresh()


def test_the_main_flows_work_at_390_px(wide_then_back: Any, oidc_server: ServerProcess, api: httpx.Client) -> None:
    """Sign in, open a kind from the folded kinds, open an item and follow its link, on a phone."""
    driver = wide_then_back
    pages.set_width(driver, pages.NARROW)
    pages.sign_in(driver, oidc_server.url, oidc_server.key)
    assert not driver.find_element("css selector", "#kinds a[data-kind=domain]").is_displayed()  # folded
    toggle = pages.find(driver, "#kinds-toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    pages.find(driver, "#kinds a[data-kind=domain]").click()
    pages.wait(driver).until(lambda d: pages.rows(d) == ["app.example.com"])
    assert not driver.find_element("css selector", "#kinds a[data-kind=domain]").is_displayed()  # folded again
    driver.find_element("link text", "app.example.com").click()
    pages.wait_text(driver, "#summary", "the app")
    workload = f"/org/{oidc_server.org}/gvc/main/workload/web"
    pages.find(driver, f"#spec a[href='#{workload}']").click()
    pages.wait_text(driver, "#spec", "nginx:latest")
    assert pages.page_overflow(driver) <= 0
    header = driver.find_element("css selector", "header.bar")
    assert header.size["width"] <= pages.NARROW  # the header wraps instead of widening the page
    pages.find(driver, "#sign-out").click()
    pages.find(driver, "#key-input")


def test_wide_screens_show_the_kinds_without_a_button(browser: Any, oidc_server: ServerProcess) -> None:
    pages.set_width(browser, pages.WIDE)
    pages.sign_in(browser, oidc_server.url, oidc_server.key)
    assert pages.find(browser, "#kinds a[data-kind=domain]").is_displayed()
    assert not browser.find_element("css selector", "#kinds-toggle").is_displayed()
