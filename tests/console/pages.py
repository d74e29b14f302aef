"""What the browser tests do to the console's pages, by the ids the page gives its parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.console.conftest import SCREENSHOTS

WAIT_S = 15
#: Watches for Content-Security-Policy violations from the moment it is installed: a test reads
#: ``window.__csp`` to show that nothing was even attempted (and blocked) on a page.
WATCH_CSP = (
    "window.__csp = window.__csp || [];"
    "document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective));"
)


def wait(driver: Any) -> WebDriverWait:
    return WebDriverWait(driver, WAIT_S)


def find(driver: Any, css: str) -> Any:
    """The visible element ``css`` selects, once it is there."""
    return wait(driver).until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))


def text_of(driver: Any, css: str) -> str:
    return str(find(driver, css).text)


def wait_text(driver: Any, css: str, text: str) -> None:
    """Until the element ``css`` holds ``text``."""
    wait(driver).until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))


def open_console(driver: Any, url: str) -> None:
    driver.get(f"{url}/console")
    driver.execute_script(WATCH_CSP)


def submit_key(driver: Any, url: str, key: str) -> None:
    """Open the console signed out (this tab's session forgotten) and submit ``key``."""
    open_console(driver, url)
    driver.execute_script("window.sessionStorage.clear(); window.location.hash = '';")
    driver.refresh()
    driver.execute_script(WATCH_CSP)
    find(driver, "#key-input").send_keys(key)
    find(driver, "#sign-in-form button[type=submit]").click()


def sign_in(driver: Any, url: str, key: str) -> None:
    """Sign in with ``key``; returns once the first page (the org's GVCs) is listed."""
    submit_key(driver, url, key)
    wait_list(driver)


def wait_list(driver: Any) -> str:
    """Until the list has loaded (its status says what it shows); that status."""
    wait(driver).until(lambda d: d.find_element(By.ID, "list-status").text.startswith(("Page", "No ")))
    return text_of(driver, "#list-status")


def go(driver: Any, route: str) -> None:
    """Follow a console route (``#/org/acme/gvc``) as a link would."""
    driver.execute_script("window.location.hash = arguments[0];", route)


def rows(driver: Any) -> list[str]:
    """The names in the list's first column, as shown (read at once: the table may be redrawn)."""
    script = "return [...document.querySelectorAll('#items tbody tr td:first-child')].map((c) => c.textContent);"
    return [str(name) for name in driver.execute_script(script)]


def session_key(driver: Any) -> str | None:
    value = driver.execute_script("return window.sessionStorage.getItem('plinth.console.key');")
    return None if value is None else str(value)


def violations(driver: Any) -> list[str]:
    return list(driver.execute_script("return window.__csp || [];"))


def screenshot(driver: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def script_errors(driver: Any) -> list[str]:
    """Errors the page's script raised since the last call (the browser's log, read and emptied);
    failed requests, which some tests cause on purpose, are not script errors."""
    return [
        str(e["message"]) for e in driver.get_log("browser") if e["level"] == "SEVERE" and e["source"] == "javascript"
    ]
