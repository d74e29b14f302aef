"""Signing in to the console with a user's ID token, on a server with an OpenID Connect issuer
(a real one on loopback, ``tests/support/oidc_issuer.py``): the sign-in page offers it when
``config.json`` says so; the token and its org are kept in ``sessionStorage`` like a key and
forgotten on sign-out; a token the server refuses is refused with the server's message."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.console import pages
from tests.support.oidc_issuer import AUDIENCE
from tests.support.server import ServerProcess

EMAIL = "dana@example.com"


@pytest.fixture(scope="module")
def api(oidc_server: ServerProcess) -> Iterator[httpx.Client]:
    """Dana is invited to the org, with a policy that lets her view its GVCs and nothing else."""
    with oidc_server.client() as client:
        org = f"/org/{oidc_server.org}"
        for name in ("main", "edge"):
            client.post(f"{org}/gvc", json={"name": name, "description": f"{name} GVC"}).raise_for_status()
        client.post(f"{org}/user/-invite", json={"emails": [EMAIL]}).raise_for_status()
        policy = {
            "name": "dana-views-gvcs",
            "targetKind": "gvc",
            "target": "all",
            "bindings": [{"permissions": ["view"], "principalLinks": [f"//user/{EMAIL}"]}],
        }
        client.post(f"{org}/policy", json=policy).raise_for_status()
        yield client


@pytest.fixture
def clean(browser: Any) -> Iterator[Any]:
    pages.script_errors(browser)
    yield browser
    assert pages.script_errors(browser) == []


def test_config_json_names_the_issuer_and_the_client_id(oidc_server: ServerProcess, issuer: Any) -> None:
    assert httpx.get(f"{oidc_server.url}/console/config.json").json() == {
        "oidc": {"issuer": issuer.url, "audience": AUDIENCE}
    }


def test_a_user_signs_in_with_an_id_token_browses_and_signs_out(
    clean: Any, oidc_server: ServerProcess, api: httpx.Client, issuer: Any
) -> None:
    driver, org = clean, oidc_server.org
    token = issuer.mint(EMAIL)
    pages.submit_token(driver, oidc_server.url, org, token)
    pages.wait(driver).until(lambda d: pages.rows(d) == ["edge", "main"])
    assert pages.session_key(driver) == token
    assert driver.execute_script("return window.sessionStorage.getItem('plinth.console.org');") == org
    assert token not in driver.current_url
    # The org picker holds the one org the token signs in to (GET /org is not for ID tokens).
    assert [o.text for o in Select(pages.find(driver, "#org-select")).options] == [org]
    pages.screenshot(driver, "id-token-gvc-list")
    driver.find_element(By.LINK_TEXT, "main").click()
    pages.wait_text(driver, "#summary", "main GVC")
    # The org kind opens the token's org rather than GET /org; the user may not view it: the 404
    # a missing org answers (docs/api.md, "Errors"), said in the console's words, and still signed in.
    pages.find(driver, "#kinds a[data-kind=org]").click()
    pages.wait_text(driver, "#notice", f"Could not open Org {org}:")
    assert "(HTTP 404, not_found" in pages.text_of(driver, "#notice")
    assert pages.session_key(driver) == token
    # Another org's page is this org's: the token signs in nowhere else.
    pages.go(driver, "#/org/elsewhere/gvc")
    pages.wait(driver).until(lambda d: d.current_url.endswith(f"#/org/{org}"))
    pages.go(driver, "#/org")
    pages.wait(driver).until(lambda d: d.current_url.endswith(f"#/org/{org}"))
    pages.find(driver, "#sign-out").click()
    pages.find(driver, "#token-input")  # the choice last made stays; the token does not
    assert pages.find(driver, "#token-org").get_attribute("value") == org
    assert driver.execute_script("return window.sessionStorage.length;") == 0
    assert driver.get_cookies() == []
    assert token not in oidc_server.log_path.read_text()


@pytest.mark.parametrize(
    "case",
    ["expired", "another audience", "another issuer's key", "an org that did not invite her"],
)
def test_a_token_the_server_refuses_is_not_kept_and_its_message_shown(
    clean: Any, oidc_server: ServerProcess, api: httpx.Client, issuer: Any, case: str
) -> None:
    now = int(time.time())
    org = oidc_server.org
    if case == "expired":
        token = issuer.mint(EMAIL, iat=now - 3600, exp=now - 600)
    elif case == "another audience":
        token = issuer.mint(EMAIL, aud="another-client")
    elif case == "another issuer's key":
        from tests.support.oidc_issuer import rsa_key

        token = issuer.mint(EMAIL, key=rsa_key())
    else:
        token, org = issuer.mint(EMAIL), "nowhere"
    pages.submit_token(clean, oidc_server.url, org, token)
    pages.wait_text(clean, "#notice", "Signing in failed: The credentials are not valid (HTTP 401, unauthorized")
    assert pages.session_key(clean) is None
    assert pages.find(clean, "#token-input").get_attribute("value") == ""
    pages.script_errors(clean)  # the refused request is logged as a failed load, not a script error


def test_a_user_removed_meanwhile_is_signed_out(
    clean: Any, oidc_server: ServerProcess, api: httpx.Client, issuer: Any
) -> None:
    email = "erin@example.com"
    org = f"/org/{oidc_server.org}"
    api.post(f"{org}/user/-invite", json={"emails": [email]}).raise_for_status()
    api.patch(f"{org}/group/viewers", json={"$append/memberLinks": [f"//user/{email}"]}).raise_for_status()
    token = issuer.mint(email)
    pages.submit_token(clean, oidc_server.url, oidc_server.org, token)
    pages.wait(clean).until(lambda d: pages.rows(d) == ["edge", "main"])
    api.delete(f"{org}/user/{email}").raise_for_status()
    # The server sees a deleted user within a second (auth/oidc.py): wait until it does.
    headers = {"Authorization": f"Bearer {token}"}
    pages.wait(clean).until(lambda _: httpx.get(f"{oidc_server.url}{org}/gvc", headers=headers).status_code == 401)
    # The page's watch stream may sign the console out first (test_live.py), so no link to click.
    pages.go(clean, f"#{org}/domain")
    pages.wait_text(clean, "#notice", "The server no longer accepts this ID token; sign in again: ")
    pages.find(clean, "#token-input")
    assert pages.session_key(clean) is None
    pages.script_errors(clean)


def test_a_key_still_signs_in_where_users_may(clean: Any, oidc_server: ServerProcess, api: httpx.Client) -> None:
    pages.sign_in(clean, oidc_server.url, oidc_server.key)
    assert pages.rows(clean) == ["edge", "main"]
    assert len(Select(pages.find(clean, "#org-select")).options) == 1
    assert clean.execute_script("return window.sessionStorage.getItem('plinth.console.org');") is None
