"""The console's write flows in a real browser: create from a kind's template, edit as YAML with
the item's version (a save, a 400 shown beside its field paths, a 409's conflict screen and its
reload, YAML that does not parse), delete after typing the name, reveal a secret (and a key
without ``reveal`` refused), and the access report. Each write is checked through the API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.console import pages
from tests.console.accounts import service_key
from tests.support.server import ServerProcess

SECRET_VALUE = "s3cret-value-only-reveal-shows"
#: Counts the writes the page sends from now on (window.fetch wrapped; the console calls the global).
COUNT_WRITES = (
    "window.__writes = []; const sent = window.fetch;"
    "window.fetch = (url, init) => { if (init && init.method && init.method !== 'GET')"
    " window.__writes.push(init.method + ' ' + url); return sent(url, init); };"
)


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        org = f"/org/{server.org}"
        for name in ("main", "edited", "contested", "kept", "broken", "doomed", "bystander", "holder"):
            client.post(f"{org}/gvc", json={"name": name, "description": f"{name} GVC"}).raise_for_status()
        workload = {"name": "web", "spec": {"containers": [{"name": "app", "image": "nginx:latest"}]}}
        client.post(f"{org}/gvc/main/workload", json=workload).raise_for_status()
        client.post(f"{org}/gvc/holder/workload", json=workload).raise_for_status()
        secret = {"name": "db-password", "type": "opaque", "data": {"payload": SECRET_VALUE, "encoding": "plain"}}
        client.post(f"{org}/secret", json=secret).raise_for_status()
        yield client


def editor_text(driver: Any) -> str:
    return str(pages.find(driver, "#yaml-editor").get_attribute("value"))


def set_editor(driver: Any, text: str) -> None:
    """Replace the editor's text (as a paste would: one input event)."""
    area = pages.find(driver, "#yaml-editor")
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", area, text
    )


def open_editor(driver: Any, item_route: str) -> None:
    """Open the item's page, then its editor by the Edit link."""
    pages.go(driver, item_route)
    pages.find(driver, "#edit-link").click()
    pages.find(driver, "#yaml-editor")


def save(driver: Any) -> None:
    pages.find(driver, "#edit-save").click()


def wait_route(driver: Any, route: str) -> None:
    pages.wait(driver).until(lambda d: d.current_url.endswith(f"/console{route}"))


def test_create_a_gvc_a_workload_and_a_secret_from_their_templates(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    org = f"/org/{server.org}"
    pages.find(console, "#create-link").click()
    wait_route(console, f"#{org}/gvc/-create")
    template = editor_text(console)
    assert "name: ''" in template and "staticPlacement:" in template
    label = console.find_element(By.CSS_SELECTOR, "label[for=yaml-editor]").text
    assert label == "The new GVC, as YAML"
    pages.screenshot(console, "create-editor")
    # The caret waits on the empty name: typing fills it in.
    pages.find(console, "#yaml-editor").send_keys("made-here")
    assert editor_text(console) == template.replace("name: ''", "name: made-here")
    save(console)
    wait_route(console, f"#{org}/gvc/made-here")
    pages.wait_text(console, "#summary", "made-here")
    assert api.get(f"{org}/gvc/made-here").json()["version"] == 1

    pages.go(console, f"#{org}/gvc/made-here/workload")
    pages.wait_list(console, f"{org}/gvc/made-here/workload")
    pages.find(console, "#create-link").click()
    assert "image: nginx:latest" in editor_text(console)
    set_editor(console, editor_text(console).replace("name: ''", "name: api", 1))
    save(console)
    wait_route(console, f"#{org}/gvc/made-here/workload/api")
    assert api.get(f"{org}/gvc/made-here/workload/api").json()["spec"]["containers"][0]["image"] == "nginx:latest"

    pages.go(console, f"#{org}/secret/-create")
    set_editor(console, editor_text(console).replace("name: ''", "name: from-template"))
    save(console)
    wait_route(console, f"#{org}/secret/from-template")
    assert api.get(f"{org}/secret/from-template/-reveal").json()["data"]["payload"] == "change me"


def test_kinds_a_person_does_not_create_have_no_create_action(console: Any, server: ServerProcess) -> None:
    pages.go(console, f"#/org/{server.org}/quota")
    pages.wait_list(console, f"/org/{server.org}/quota")
    pages.go(console, f"#/org/{server.org}/secret")
    pages.find(console, "#create-link")  # the secret list has one...
    pages.go(console, f"#/org/{server.org}/quota")
    pages.wait_list(console, f"/org/{server.org}/quota")
    assert not console.find_element(By.ID, "create-link").is_displayed()  # ...the quota list none


def test_an_edit_saves_with_its_version_and_the_version_goes_up(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    route = f"#/org/{server.org}/gvc/edited"
    open_editor(console, route)
    assert pages.text_of(console, "#edit-version") == "Editing version 1."
    text = editor_text(console)
    assert "description: edited GVC" in text and "version:" not in text and "status:" not in text
    set_editor(console, text.replace("description: edited GVC", "description: saved from the console"))
    save(console)
    wait_route(console, route)
    pages.wait_text(console, "#summary", "saved from the console")
    stored = api.get(f"/org/{server.org}/gvc/edited").json()
    assert (stored["version"], stored["description"]) == (2, "saved from the console")
    assert "version: 2" in pages.text_of(console, "#yaml")


def test_an_edit_the_server_refuses_shows_each_problem_beside_its_path(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    path = f"/org/{server.org}/gvc/main/workload/web"
    open_editor(console, f"#{path}")
    text = editor_text(console)
    broken = text.replace("image: nginx:latest", "image: nginx:latest\n      bogus: 1").replace(
        "description: web", "description: never stored"
    )
    set_editor(console, broken + "nonsense: true\n")
    save(console)
    pages.find(console, "#problem-list")
    problems = [li.text for li in console.find_elements(By.CSS_SELECTOR, "#problem-list li")]
    assert any(p.startswith("spec.containers[0].bogus — unknown field") for p in problems), problems
    assert any(p.startswith("nonsense — unknown field") for p in problems), problems
    assert "nothing was stored (HTTP 400" in pages.text_of(console, "#edit-problems")
    area = console.find_element(By.ID, "yaml-editor")
    assert area.get_attribute("aria-invalid") == "true"
    assert area.get_attribute("aria-describedby") == "edit-problems"
    assert console.find_element(By.ID, "edit-problems").get_attribute("role") == "alert"
    pages.screenshot(console, "edit-400")
    # Each problem's line button puts the caret on the line of its path.
    bogus_line = broken.split("\n").index("      bogus: 1") + 1
    line_button = console.find_element(By.XPATH, "//li[starts-with(., 'spec.containers[0].bogus')]//button")
    assert line_button.text == f"line {bogus_line}"
    line_button.click()
    caret = console.execute_script("const a = document.getElementById('yaml-editor'); return a.selectionStart;")
    assert broken[:caret].count("\n") + 1 == bogus_line
    assert console.switch_to.active_element == area
    stored = api.get(path).json()
    assert stored["version"] == 1 and stored["description"] == "web"


def test_an_edit_that_conflicts_shows_both_sides_and_reloads(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    path = f"/org/{server.org}/gvc/contested"
    open_editor(console, f"#{path}")
    api.patch(path, json={"description": "changed elsewhere"}).raise_for_status()  # version 2, meanwhile
    set_editor(console, editor_text(console).replace("description: contested GVC", "description: mine"))
    save(console)
    pages.find(console, "#conflict")
    assert "description: mine" in pages.text_of(console, "#conflict-mine")
    assert "description: changed elsewhere" in pages.text_of(console, "#conflict-theirs")
    assert "the server now holds version 2" in pages.text_of(console, "#conflict")
    assert not console.find_element(By.ID, "edit-form").is_displayed()
    pages.screenshot(console, "conflict")
    assert api.get(path).json()["description"] == "changed elsewhere"  # nothing of mine stored

    pages.find(console, "#conflict-reload").click()
    pages.wait(console).until(lambda d: "description: changed elsewhere" in editor_text(d))
    assert pages.text_of(console, "#edit-version") == "Editing version 2."
    set_editor(console, editor_text(console).replace("changed elsewhere", "mine, after reloading"))
    save(console)
    wait_route(console, f"#{path}")
    stored = api.get(path).json()
    assert (stored["version"], stored["description"]) == (3, "mine, after reloading")


def test_keeping_my_edit_after_a_conflict_saves_it_over_the_other(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    path = f"/org/{server.org}/gvc/kept"
    open_editor(console, f"#{path}")
    api.patch(path, json={"tags": {"by": "someone-else"}}).raise_for_status()
    set_editor(console, editor_text(console).replace("description: kept GVC", "description: my version"))
    save(console)
    pages.find(console, "#conflict-keep").click()
    assert "description: my version" in editor_text(console)
    assert "over version 2" in pages.text_of(console, "#edit-version")
    save(console)
    wait_route(console, f"#{path}")
    stored = api.get(path).json()
    assert (stored["version"], stored["description"], stored["tags"]) == (3, "my version", {})


def test_yaml_that_does_not_parse_is_shown_with_its_line_and_nothing_is_sent(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    path = f"/org/{server.org}/gvc/broken"
    open_editor(console, f"#{path}")
    console.execute_script(COUNT_WRITES)
    set_editor(console, "name: broken\ndescription: fine\nspec: [unclosed\ntags: {}\n")
    save(console)
    message = pages.text_of(console, "#parse-error")
    assert message.startswith("The YAML does not parse at line 4, column 1:") and "Nothing was sent." in message
    set_editor(console, "- a list\n- is not an item\n")
    save(console)
    pages.wait_text(console, "#parse-error", "must be a mapping")
    assert console.execute_script("return window.__writes;") == []
    assert api.get(path).json()["version"] == 1


def test_delete_waits_for_the_exact_name(console: Any, server: ServerProcess, api: httpx.Client) -> None:
    org = f"/org/{server.org}"
    pages.go(console, f"#{org}/gvc/doomed")
    pages.find(console, "#delete-open").click()
    typed = pages.find(console, "#delete-name")
    confirm = console.find_element(By.ID, "delete-confirm")
    assert confirm.get_attribute("disabled") is not None
    for wrong in ("doome", "bystander", "Doomed", "doomed "):
        typed.clear()
        typed.send_keys(wrong)
        assert confirm.get_attribute("disabled") is not None, wrong
    typed.send_keys(Keys.ENTER)  # submitting with a wrong name deletes nothing
    assert api.get(f"{org}/gvc/doomed").status_code == 200
    assert api.get(f"{org}/gvc/bystander").status_code == 200
    typed.clear()
    typed.send_keys("doomed")
    assert confirm.get_attribute("disabled") is None
    confirm.click()
    wait_route(console, f"#{org}/gvc")
    pages.wait_list(console, f"{org}/gvc")
    assert api.get(f"{org}/gvc/doomed").status_code == 404
    assert api.get(f"{org}/gvc/bystander").status_code == 200


def test_a_refused_delete_is_said_in_the_consoles_words(console: Any, server: ServerProcess, api: httpx.Client) -> None:
    org = f"/org/{server.org}"
    pages.go(console, f"#{org}/gvc/holder")
    pages.find(console, "#delete-open").click()
    pages.find(console, "#delete-name").send_keys("holder")
    pages.find(console, "#delete-confirm").click()
    pages.wait_text(console, "#notice", "Could not delete GVC holder: ")
    notice = pages.text_of(console, "#notice")
    assert "workload/web" in notice and "(HTTP 409, conflict" in notice
    assert api.get(f"{org}/gvc/holder").status_code == 200


def test_reveal_shows_a_secrets_data_only_when_asked(console: Any, server: ServerProcess) -> None:
    route = f"#/org/{server.org}/secret/db-password"
    pages.go(console, route)
    pages.wait_text(console, "#secret-data", "not shown until you reveal it")
    pages.find(console, "#access-table")  # the page has finished loading
    assert SECRET_VALUE not in console.find_element(By.TAG_NAME, "body").text
    pages.find(console, "#reveal").click()
    pages.wait_text(console, "#secret-revealed", f"payload: {SECRET_VALUE}")
    pages.screenshot(console, "secret-revealed")
    stored = console.execute_script("return JSON.stringify(Object.entries(window.sessionStorage));")
    assert SECRET_VALUE not in stored and SECRET_VALUE not in console.current_url
    pages.find(console, "#reveal-hide").click()
    assert SECRET_VALUE not in pages.text_of(console, "#secret-data")
    pages.find(console, "#reveal").click()
    pages.wait_text(console, "#secret-revealed", SECRET_VALUE)
    pages.go(console, f"#/org/{server.org}/secret")  # leaving the page forgets it
    pages.wait_list(console, f"/org/{server.org}/secret")
    pages.go(console, route)
    pages.wait_text(console, "#secret-data", "not shown until you reveal it")
    assert SECRET_VALUE not in console.find_element(By.TAG_NAME, "body").text


def test_reveal_is_refused_to_a_key_without_the_reveal_permission(
    browser: Any, server: ServerProcess, api: httpx.Client
) -> None:
    org = f"/org/{server.org}"
    key = service_key(api, org, "secret-viewer")["key"]
    bindings = [{"permissions": ["view"], "principalLinks": ["//serviceaccount/secret-viewer"]}]
    for kind in ("org", "gvc", "secret"):
        policy = {"name": f"viewer-{kind}", "targetKind": kind, "target": "all", "bindings": bindings}
        api.post(f"{org}/policy", json=policy).raise_for_status()
    pages.script_errors(browser)
    pages.sign_in(browser, server.url, key)
    pages.go(browser, f"#{org}/secret/db-password")
    pages.find(browser, "#reveal").click()
    pages.wait_text(
        browser, "#reveal-error", "This key may not reveal the secret's data (it needs the reveal permission)"
    )
    message = pages.text_of(browser, "#reveal-error")
    assert "Permission 'reveal' on secret 'db-password' is needed (HTTP 403, forbidden" in message
    assert SECRET_VALUE not in browser.find_element(By.TAG_NAME, "body").text
    assert pages.script_errors(browser) == []


def test_the_access_report_lists_principals_and_its_links_navigate(console: Any, server: ServerProcess) -> None:
    org = f"/org/{server.org}"
    pages.go(console, f"#{org}/gvc/main")
    pages.find(console, "#access-table")
    rows = console.find_elements(By.CSS_SELECTOR, "#access-table tbody tr")
    superusers = [r for r in rows if r.find_element(By.CSS_SELECTOR, "td").text == f"{org}/group/superusers"]
    assert len(superusers) == 1
    cells = [c.text for c in superusers[0].find_elements(By.CSS_SELECTOR, "td")]
    assert "manage" in cells[1].split(", ") and "view" in cells[1].split(", ")
    assert f"{org}/policy/superusers-gvc" in cells[2] and "(manage; all)" in cells[2]
    superusers[0].find_element(By.CSS_SELECTOR, f"a[href='#{org}/group/superusers']").click()
    wait_route(console, f"#{org}/group/superusers")
    pages.wait_text(console, "#view h1", "superusers")


def test_a_kind_without_put_is_edited_with_a_patch_carrying_the_version(
    console: Any, server: ServerProcess, api: httpx.Client
) -> None:
    org = f"/org/{server.org}"
    quota = next(q for q in api.get(f"{org}/quota").json()["items"] if q["name"] == "agents")
    path = f"{org}/quota/{quota['id']}"
    open_editor(console, f"#{path}")
    assert "sends a PATCH" in pages.text_of(console, "#view")
    text = editor_text(console)
    assert f"max: {quota['max']}" in text and "current:" not in text  # server-owned fields left out
    set_editor(console, text.replace(f"max: {quota['max']}", "max: 7"))
    save(console)
    wait_route(console, f"#{path}")
    stored = api.get(path).json()
    assert (stored["max"], stored["version"]) == (7, quota["version"] + 1)
