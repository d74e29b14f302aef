"""Headless Chromium from Debian's packages, driven by Selenium, against a real ``plinth serve``.

- The browser and its driver are Debian's (``/usr/bin/chromium``, ``/usr/bin/chromedriver``),
  named explicitly: Selenium Manager never runs (it would download a driver and send usage
  statistics; ``SE_AVOID_STATS=true`` and an explicit ``Service`` path keep it out).
- When they are missing the set-up installs them (``apt-get install -y chromium
  chromium-driver``, once, under a file lock, as ``tests/compat`` installs the official CLI with
  npm); when that cannot be done the tests skip with the reason, except under ``CI=true``,
  where they fail.
- The browser reaches nothing beyond loopback: background networking, component updates, sync
  and QUIC are off, and each module gets a fresh profile directory. One browser and one server
  per module keep the suite lean.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.required import unavailable
from tests.support.server import ServerProcess, start_server

CHROMIUM = Path(os.environ.get("PLINTH_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("PLINTH_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"))
APT_TIMEOUT_S = 240  # under pytest-timeout's 300 s for the test whose set-up installs them
#: Where the tests write screenshots of the main pages (git-ignored).
SCREENSHOTS = ROOT / "build" / "console-screenshots"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)


def _install() -> None:
    """``apt-get install`` Chromium and its driver, or skip (fail under CI) saying why not."""
    if shutil.which("apt-get") is None:
        unavailable("Chromium", f"{CHROMIUM} or {CHROMEDRIVER} is missing and there is no apt-get to install them")
    if os.geteuid() != 0:
        missing = f"{CHROMIUM} or {CHROMEDRIVER} is missing"
        unavailable("Chromium", f"{missing}: run 'apt-get install chromium chromium-driver' as root")
    args = ["apt-get", "install", "-y", "chromium", "chromium-driver"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=APT_TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired:
        unavailable("Chromium", f"'{' '.join(args)}' took more than {APT_TIMEOUT_S} s")
    if done.returncode != 0:
        unavailable("Chromium", f"'{' '.join(args)}' failed ({done.returncode}):\n{done.stderr[-2000:]}")


def ensure_chromium() -> None:
    """Chromium and chromedriver from Debian, installed when missing (skip or fail if impossible)."""
    lock_dir = ROOT / "build"
    lock_dir.mkdir(exist_ok=True)
    with open(lock_dir / "chromium.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one xdist worker installs, the others wait for it
        if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
            _install()
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        unavailable("Chromium", f"apt-get did not install {CHROMIUM} and {CHROMEDRIVER}")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile; quit after."""
    ensure_chromium()
    os.environ["SE_AVOID_STATS"] = "true"  # read by Selenium: no usage statistics, ever
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        unavailable("selenium", f"selenium is not installed ({exc}): pip install -e '.[test]'")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    # Every load asks the server: in three full runs of the suite on a loaded 2-core machine, a
    # reload took the page's module scripts from Chromium's cache (the server saw no request for
    # them, nor for config.json, which the first module fetches) and the page never started, so
    # a test waited for a sign-in form that never came. What the tests check is the console, not
    # Chromium's cache.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def console(browser: Any, server: ServerProcess, api: Any) -> Iterator[Any]:
    """The browser, signed in with the server's admin key on the org's GVC list, once the
    module's ``api`` fixture has stored what it browses; after the test, no script error may
    have been logged."""
    from tests.console import pages  # late: pages imports this module (SCREENSHOTS)

    pages.script_errors(browser)
    pages.sign_in(browser, server.url, server.key)
    yield browser
    assert pages.script_errors(browser) == []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A SQLite server for the module (the console is store-agnostic: one PostgreSQL smoke test
    in ``test_flows.py`` shows it)."""
    process = start_server(tmp_path_factory.mktemp("plinth-console"))
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def issuer() -> Iterator[Any]:
    """A real OpenID Connect issuer on loopback (``tests/support/oidc_issuer.py``)."""
    from tests.support.oidc_issuer import Issuer

    with Issuer() as running:
        yield running


@pytest.fixture(scope="module")
def oidc_server(issuer: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A SQLite server whose users sign in with ID tokens from ``issuer``."""
    from tests.support.oidc_issuer import AUDIENCE

    args = ("--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE)
    process = start_server(tmp_path_factory.mktemp("plinth-console-oidc"), extra_args=args)
    try:
        yield process
    finally:
        process.stop()
