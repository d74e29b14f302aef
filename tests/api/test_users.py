"""Users through real HTTP: invitations, lookup by email, and users signed in with ID tokens
from a real OpenID Connect issuer on loopback, reading what their policies allow."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.oidc_issuer import Issuer
from tests.support.server import ServerProcess


@pytest.fixture(scope="module")
def anonymous(server: ServerProcess) -> Iterator[httpx.Client]:
    """A client without credentials: each request brings its own token."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _invite(api: httpx.Client, *emails: str, **extra: Any) -> dict[str, Any]:
    reply = api.post("/org/acme/user/-invite", json={"emails": list(emails), **extra})
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _service_account(api: httpx.Client, name: str) -> str:
    """A new service account's key."""
    api.post("/org/acme/serviceaccount", json={"name": name}).raise_for_status()
    reply = api.post(f"/org/acme/serviceaccount/{name}/-addKey", json={"description": "test"})
    reply.raise_for_status()
    return str(reply.json()["key"])


def _policy(
    api: httpx.Client, name: str, kind: str, permissions: list[str], principals: list[str], **target: Any
) -> None:
    body = {
        "name": name,
        "targetKind": kind,
        **(target or {"target": "all"}),
        "bindings": [{"permissions": permissions, "principalLinks": principals}],
    }
    api.post("/org/acme/policy", json=body).raise_for_status()


# -- invitations ------------------------------------------------------------------------------


def test_an_invited_user_exists_by_its_lowercased_email(api: httpx.Client, unique: str) -> None:
    sent = f"{unique}.Ada@Example.com"
    email = sent.lower()
    assert _invite(api, sent) == {"invitations": {sent: f"/org/acme/user/{email}"}, "errors": {}}
    user = api.get(f"/org/acme/user/{email}").json()
    assert (user["kind"], user["name"], user["email"]) == ("user", email, email)
    assert "idp" not in user and "description" not in user
    events = api.get(f"/org/acme/user/{email}/-eventlog").json()["items"]
    assert [e["context"]["principalLink"] for e in events] == ["/org/acme/serviceaccount/admin"]


def test_invalid_and_existing_emails_are_errors_beside_the_invitations(api: httpx.Client, unique: str) -> None:
    existing = f"{unique}-old@example.com"
    _invite(api, existing)
    new, twice = f"{unique}-new@example.com", f"{unique}-Twice@example.com"
    answer = _invite(api, new, "not-an-email", existing, twice, twice.lower(), "-x@example.com")
    assert answer["invitations"] == {
        new: f"/org/acme/user/{new}",
        twice: f"/org/acme/user/{twice.lower()}",
        twice.lower(): f"/org/acme/user/{twice.lower()}",
    }
    errors = answer["errors"]
    assert sorted(errors) == sorted(["not-an-email", existing, "-x@example.com"])
    assert (errors["not-an-email"]["status"], errors["not-an-email"]["code"]) == (400, "invalid")
    assert errors["not-an-email"]["details"]["errors"][0]["path"] == "emails[1]"
    assert (errors[existing]["status"], errors[existing]["code"]) == (409, "conflict")
    assert all({"status", "message", "code", "id"} <= set(e) for e in errors.values())
    assert api.get(f"/org/acme/user/{twice.lower()}").status_code == 200


@pytest.mark.parametrize(
    "body",
    [{}, {"emails": []}, {"emails": "a@example.com"}, {"emails": [1]}, {"emails": ["a@example.com"], "extra": 1}],
)
def test_an_invitation_body_is_checked_as_a_whole(api: httpx.Client, body: dict[str, Any]) -> None:
    reply = api.post("/org/acme/user/-invite", json=body)
    assert reply.status_code == 400 and reply.json()["code"] == "invalid"


def test_invitations_are_bounded_and_only_posted(api: httpx.Client) -> None:
    too_many = [f"u{i}@example.com" for i in range(101)]
    assert api.post("/org/acme/user/-invite", json={"emails": too_many}).status_code == 400
    assert api.get("/org/acme/user/-invite").status_code == 405
    assert api.post("/org/acme/user", json={"name": "a@example.com", "email": "a@example.com"}).status_code == 405


def test_an_invitation_into_a_group_adds_the_new_users(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/group", json={"name": unique}).raise_for_status()
    first, second = f"{unique}-1@example.com", f"{unique}-2@example.com"
    _invite(api, first, groupLink=f"//group/{unique}")
    _invite(api, second, groupLink=f"/org/acme/group/{unique}")
    members = api.get(f"/org/acme/group/{unique}").json()["memberLinks"]
    assert members == [f"/org/acme/user/{first}", f"/org/acme/user/{second}"]


def test_an_invitation_answers_each_email_and_the_invited_user_is_an_item(api: httpx.Client, unique: str) -> None:
    api.post("/org/acme/group", json={"name": unique}).raise_for_status()
    email = f"{unique}@example.com"
    sent = [email.upper(), "not-an-email"]
    invited = _invite(api, *sent, groupLink=f"//group/{unique}")
    assert invited["invitations"] == {sent[0]: f"/org/acme/user/{email}"}
    assert invited["errors"]["not-an-email"]["status"] == 400
    again = _invite(api, email)
    assert again == {"invitations": {}, "errors": {email: again["errors"][email]}}
    assert again["errors"][email]["code"] == "conflict"
    assert api.post("/org/acme/user/-invite", json={"emails": []}).status_code == 400
    # The invited user is an item now: who may do what to it.
    report = api.get(f"/org/acme/user/{email}/-accessreport")
    assert report.status_code == 200 and report.json()["kind"] == "accessreport", report.text


@pytest.mark.parametrize(
    ("group_link", "status"),
    [("//group/no-such-group", 404), ("//serviceaccount/admin", 400), ("/org/other/group/x", 400)],
)
def test_an_unusable_group_link_fails_the_invitation_before_any_user_exists(
    api: httpx.Client, unique: str, group_link: str, status: int
) -> None:
    email = f"{unique}@example.com"
    reply = api.post("/org/acme/user/-invite", json={"emails": [email], "groupLink": group_link})
    assert reply.status_code == status
    assert api.get(f"/org/acme/user/-for/email/{email}").status_code == 404


def test_a_user_is_found_by_email_in_any_case(api: httpx.Client, unique: str) -> None:
    email = f"{unique}@example.com"
    _invite(api, email)
    found = api.get(f"/org/acme/user/-for/email/{email.upper()}")
    assert found.status_code == 200 and found.json()["name"] == email
    assert api.get(f"/org/acme/user/-for/email/missing-{email}").status_code == 404
    assert api.get("/org/acme/user/-for/email/not-an-email").status_code == 404
    assert api.post(f"/org/acme/user/-for/email/{email}", json={}).status_code == 405


def test_inviting_needs_invite_and_a_group_link_needs_edit_on_the_group(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    key = _service_account(api, unique)
    email = f"{unique}@example.com"
    refused = anonymous.post("/org/acme/user/-invite", json={"emails": [email]}, headers=_as(key))
    assert refused.status_code == 403 and refused.json()["details"]["permission"] == "invite"

    _policy(api, unique, "user", ["invite"], [f"//serviceaccount/{unique}"])
    group = f"{unique}-team"
    api.post("/org/acme/group", json={"name": group}).raise_for_status()
    into_group = {"emails": [email], "groupLink": f"//group/{group}"}
    # A group the caller may not view answers as a missing one would (docs/api.md, "Errors").
    refused = anonymous.post("/org/acme/user/-invite", json=into_group, headers=_as(key))
    assert refused.status_code == 404 and refused.json()["details"] == {"kind": "group", "name": group}
    assert api.get(f"/org/acme/user/{email}").status_code == 404
    refused = anonymous.post(
        "/org/acme/user/-invite", json={**into_group, "groupLink": "//group/superusers"}, headers=_as(key)
    )
    assert refused.status_code == 404
    _policy(api, f"{unique}-view", "group", ["view"], [f"//serviceaccount/{unique}"], targetLinks=[f"//group/{group}"])
    refused = anonymous.post("/org/acme/user/-invite", json=into_group, headers=_as(key))
    assert refused.status_code == 403 and refused.json()["details"]["permission"] == "edit"
    assert api.get(f"/org/acme/user/{email}").status_code == 404

    _policy(api, f"{unique}-edit", "group", ["edit"], [f"//serviceaccount/{unique}"], targetLinks=[f"//group/{group}"])
    invited = anonymous.post("/org/acme/user/-invite", json=into_group, headers=_as(key))
    assert invited.status_code == 200 and invited.json()["invitations"] == {email: f"/org/acme/user/{email}"}
    assert api.get(f"/org/acme/group/{group}").json()["memberLinks"] == [f"/org/acme/user/{email}"]
    events = api.get(f"/org/acme/user/{email}/-eventlog").json()["items"]
    assert events[0]["context"]["principalLink"] == f"/org/acme/serviceaccount/{unique}"


# -- signed-in users ---------------------------------------------------------------------------


def test_a_signed_in_user_reads_what_its_policies_allow_and_nothing_else(
    api: httpx.Client, anonymous: httpx.Client, issuer: Issuer, unique: str
) -> None:
    email = f"{unique}@example.com"
    _invite(api, email)
    mine, other = f"{unique}-a", f"{unique}-b"
    for name in (mine, other):
        api.post("/org/acme/gvc", json={"name": name}).raise_for_status()
    _policy(api, unique, "gvc", ["view"], [f"//user/{email}"], targetLinks=[f"//gvc/{mine}"])
    user = _as(issuer.mint(email))

    assert anonymous.get(f"/org/acme/gvc/{mine}", headers=user).status_code == 200
    denied = anonymous.get(f"/org/acme/gvc/{other}", headers=user)
    # Hidden answers as missing does (docs/api.md, "Errors"); a visible item's missing right is a 403.
    assert denied.status_code == 404 and denied.json()["details"] == {"kind": "gvc", "name": other}
    listed = anonymous.get("/org/acme/gvc", headers=user).json()["items"]
    assert [item["name"] for item in listed] == [mine]
    denied = anonymous.patch(f"/org/acme/gvc/{mine}", json={"tags": {"a": "b"}}, headers=user)
    assert denied.status_code == 403 and denied.json()["details"]["permission"] == "edit"
    assert anonymous.post("/org/acme/gvc", json={"name": f"{unique}-c"}, headers=user).status_code == 403
    assert anonymous.get(f"/org/acme/user/{email}", headers=user).status_code == 404

    _policy(api, f"{unique}-edit", "gvc", ["edit"], [f"//user/{email}"], targetLinks=[f"//gvc/{mine}"])
    assert anonymous.patch(f"/org/acme/gvc/{mine}", json={"tags": {"a": "b"}}, headers=user).status_code == 200
    events = api.get(f"/org/acme/gvc/{mine}/-eventlog").json()["items"]
    assert f"/org/acme/user/{email}" in [e["context"]["principalLink"] for e in events]


def test_a_member_query_on_tags_admits_users_and_never_service_accounts(
    api: httpx.Client, anonymous: httpx.Client, issuer: Issuer, unique: str
) -> None:
    tagged, untagged = f"{unique}-t@example.com", f"{unique}-u@example.com"
    _invite(api, tagged, untagged)
    api.patch(f"/org/acme/user/{tagged}", json={"tags": {"team": unique}}).raise_for_status()
    robot_key = _service_account(api, unique)
    api.patch(f"/org/acme/serviceaccount/{unique}", json={"tags": {"team": unique}}).raise_for_status()
    query = {"kind": "user", "spec": {"terms": [{"op": "=", "tag": "team", "value": unique}]}}
    api.post("/org/acme/group", json={"name": unique, "memberQuery": query}).raise_for_status()
    api.post("/org/acme/gvc", json={"name": unique}).raise_for_status()
    _policy(api, unique, "gvc", ["view"], [f"//group/{unique}"], targetLinks=[f"//gvc/{unique}"])
    path = f"/org/acme/gvc/{unique}"

    assert anonymous.get(path, headers=_as(issuer.mint(tagged))).status_code == 200
    assert anonymous.get(path, headers=_as(issuer.mint(untagged))).status_code == 404
    assert anonymous.get(path, headers=_as(robot_key)).status_code == 404
    api.patch(f"/org/acme/user/{tagged}", json={"tags": {"team": None}}).raise_for_status()
    assert anonymous.get(path, headers=_as(issuer.mint(tagged))).status_code == 404


def test_a_member_query_on_the_email_domain_admits_that_domain_only(
    api: httpx.Client, anonymous: httpx.Client, issuer: Issuer, unique: str
) -> None:
    inside, outside = f"{unique}@{unique}.example", f"{unique}@elsewhere.example"
    _invite(api, inside, outside)
    query = {"kind": "user", "spec": {"terms": [{"op": "~", "property": "email", "value": f"@{unique}\\.example$"}]}}
    api.post("/org/acme/group", json={"name": unique, "memberQuery": query}).raise_for_status()
    _policy(api, unique, "user", ["view"], [f"//group/{unique}"])

    assert anonymous.get(f"/org/acme/user/-for/email/{outside}", headers=_as(issuer.mint(inside))).status_code == 200
    assert anonymous.get(f"/org/acme/user/-for/email/{inside}", headers=_as(issuer.mint(outside))).status_code == 404
