"""What the browser tests do to the console's pages, by the ids the page gives its parts."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.console.conftest import SCREENSHOTS
from tests.support import npm
from tests.support.paths import ROOT

WAIT_S = 30  # a bound, not a timing: under a full run's load a page has taken more than 15 s
#: axe-core, the accessibility engine, pinned; installed by npm into the git-ignored .cache
#: (never shipped in the package): ``axe`` injects it into the page under test.
AXE_PACKAGE = "axe-core"
AXE_VERSION = "4.10.2"
AXE_PREFIX = ROOT / ".cache" / "axe-core"
#: The widths every page is checked at: a laptop, and a phone held upright.
WIDE, NARROW = 1280, 390
#: Watches for Content-Security-Policy violations from the moment it is installed: a test reads
#: ``window.__csp`` to show that nothing was even attempted (and blocked) on a page.
WATCH_CSP = (
    "window.__csp = window.__csp || [];"
    "document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective));"
)


class _Wait(WebDriverWait):  # type: ignore[type-arg]
    """A wait whose timeout says where the page was: its address, whether it loaded, what it
    showed, and what the browser logged (a wait that fails only under a full run's load
    otherwise leaves nothing to go on)."""

    def until(self, method: Any, message: str = "") -> Any:
        try:
            return super().until(method, message)
        except TimeoutException as exc:
            raise TimeoutException(f"{message} after {WAIT_S} s; {page_state(self._driver)}") from exc


def page_state(driver: Any) -> str:
    try:
        shown = "(document.body && document.body.innerText || '').slice(0, 400)"
        state = driver.execute_script(f"return [location.href, document.readyState, {shown}];")
        logged = [f"{e['level']} {e['message']}"[:300] for e in driver.get_log("browser")][-8:]
    except WebDriverException as exc:
        return f"the page could not be read: {exc.msg}"
    return f"at {state[0]} ({state[1]}), showing {state[2]!r}; the browser logged {logged}"


def wait(driver: Any) -> WebDriverWait:
    return _Wait(driver, WAIT_S)


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


def wait_list(driver: Any, path: str | None = None) -> str:
    """Until a list has loaded (its status says what it shows), the list of ``path`` (an API
    path, ``/org/acme/group``) if given, since right after a navigation the last list is still on
    the page; that status. Read in one script: a redraw between reads would leave a stale element."""
    script = "const s = document.getElementById('list-status'); return s && [s.dataset.path, s.textContent];"

    def loaded(d: Any) -> str | None:
        state = d.execute_script(script)
        if not state or not str(state[1]).startswith(("Page", "No ")):
            return None
        return str(state[1]) if path is None or state[0] == path else None

    return str(wait(driver).until(loaded))


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


def submit_token(driver: Any, url: str, org: str, token: str) -> None:
    """Open the console signed out and submit an ID token for ``org`` (the server offers it)."""
    open_console(driver, url)
    driver.execute_script("window.sessionStorage.clear(); window.location.hash = '';")
    driver.refresh()
    driver.execute_script(WATCH_CSP)
    find(driver, "#method-token").click()
    find(driver, "#token-org").send_keys(org)
    find(driver, "#token-input").send_keys(token)
    find(driver, "#token-form button[type=submit]").click()


# -- widths ------------------------------------------------------------------------------------


def set_width(driver: Any, width: int, height: int = 900) -> None:
    """Lay the page out ``width`` CSS pixels wide (the device metrics Chromium emulates: a
    headless window cannot be made narrower than 500 px)."""
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    wait(driver).until(lambda d: d.execute_script("return window.innerWidth;") == width)


def page_overflow(driver: Any) -> int:
    """How many pixels the page is wider than the window (0: no horizontal page scroll)."""
    return int(driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth;"))


# -- the keyboard ------------------------------------------------------------------------------


def press(driver: Any, *keys: str) -> None:
    """Send ``keys`` to whatever has focus, as a person typing would (no element is clicked)."""
    ActionChains(driver).send_keys(*keys).perform()


def shift_tab(driver: Any) -> None:
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()


def focused(driver: Any) -> Any:
    return driver.switch_to.active_element


def focused_is(driver: Any, css: str) -> bool:
    return bool(
        driver.execute_script("return !!document.activeElement && document.activeElement.matches(arguments[0]);", css)
    )


def tab_to(driver: Any, css: str, back: bool = False, limit: int = 120) -> Any:
    """Press Tab (Shift-Tab when ``back``) until the focused element matches ``css``; it."""
    for _ in range(limit):
        if focused_is(driver, css):
            return focused(driver)
        shift_tab(driver) if back else press(driver, Keys.TAB)
    raise AssertionError(f"{limit} presses of {'Shift-' if back else ''}Tab never reached {css}")


# -- accessibility -----------------------------------------------------------------------------


@functools.cache
def _axe_source() -> str:
    return (npm.ensure_package(AXE_PREFIX, AXE_PACKAGE, AXE_VERSION) / "axe.min.js").read_text()


#: Runs axe on the whole document; only what a test needs of each violation comes back.
RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ['violations'] }).then((results) => done(results.violations.map((v) => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
})))).catch((error) => done([{ id: 'axe-error', impact: 'critical', help: String(error), nodes: [] }]));
"""


def axe(driver: Any) -> list[dict[str, Any]]:
    """The page's accessibility violations by axe-core (injected into the page for the check,
    not shipped), each ``{id, impact, help, nodes: [{target, summary}]}``."""
    if not driver.execute_script("return typeof window.axe === 'object';"):
        driver.execute_script(_axe_source())
    driver.set_script_timeout(60)
    return list(driver.execute_async_script(RUN_AXE))


def serious(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The violations of impact serious or critical (printing the others, which do not fail)."""
    for v in found:
        if v["impact"] not in ("serious", "critical"):
            print(f"axe {v['impact']}: {v['id']}: {v['help']} at {[n['target'] for n in v['nodes']]}")
    return [v for v in found if v["impact"] in ("serious", "critical")]
