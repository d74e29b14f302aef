"""``edit`` on one policy is not org admin (issue 21, defect 5): a write of a policy is judged
on the grants it adds, not only on the item (``engine/escalation.py``; docs/api.md, "Writing
policies: the escalation rule"). Both backends, through real HTTP.

The reproduction: with ``edit`` on a single policy, a principal changed its ``targetKind`` to
``policy`` and its target to all, granted itself ``manage`` on service accounts and minted keys.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.authz_support import bearer, ok, service_account_with_key
from tests.support.server import ServerProcess

ORG = "acme"
POLICY = f"/org/{ORG}/policy"
_n = itertools.count()


@pytest.fixture(scope="module")
def admin(api: httpx.Client) -> httpx.Client:
    """The module's server (tests/hostile/conftest.py, once per store) as its admin."""
    return api


class Principal:
    """A service account with a key, and a client acting as it."""

    def __init__(self, admin: httpx.Client, server: ServerProcess, prefix: str):
        self.name = f"{prefix}{next(_n)}"
        self.link = f"/org/{ORG}/serviceaccount/{self.name}"
        self.key = service_account_with_key(admin, ORG, self.name)
        self.api = httpx.Client(base_url=server.url, headers=bearer(self.key), timeout=30)


def grant(admin: httpx.Client, to: Principal, kind: str, permissions: list[str], links: list[str] | None = None) -> str:
    """A policy (written by the admin) giving ``to`` ``permissions`` on ``links`` or on all of ``kind``."""
    name = f"grant{next(_n)}"
    target: dict[str, Any] = {"targetLinks": links} if links is not None else {"target": "all"}
    body = {
        "name": name,
        "targetKind": kind,
        **target,
        "bindings": [{"permissions": permissions, "principalLinks": [to.link]}],
    }
    ok(admin.post(POLICY, json=body), 201)
    return name


def policy(admin: httpx.Client, kind: str, permissions: list[str], principal: str, **target: Any) -> str:
    name = f"pol{next(_n)}"
    body = {
        "name": name,
        "targetKind": kind,
        **target,
        "bindings": [{"permissions": permissions, "principalLinks": [principal]}],
    }
    ok(admin.post(POLICY, json=body), 201)
    return name


def refused(response: httpx.Response, permission: str, kind: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["details"]["permission"] == permission and body["details"]["kind"] == kind, body
    assert "you may grant only what you hold" in body["message"]


@pytest.fixture
def mallory(admin: httpx.Client, server: ServerProcess) -> Iterator[Principal]:
    p = Principal(admin, server, "mallory")
    yield p
    p.api.close()


def test_edit_on_one_policy_does_not_make_an_org_admin(admin: httpx.Client, mallory: Principal) -> None:
    """The probe's path, step by step: every escalating step is a 403 and changes nothing."""
    victim = policy(admin, "gvc", ["view"], f"/org/{ORG}/group/viewers", targetLinks=[f"/org/{ORG}/gvc/nothing"])
    grant(admin, mallory, "policy", ["edit"], links=[f"{POLICY}/{victim}"])
    before = ok(admin.get(f"{POLICY}/{victim}"))

    takeover = {
        "targetKind": "policy",
        "target": "all",
        "$replace/bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
        "targetLinks": [],
    }
    refused(mallory.api.patch(f"{POLICY}/{victim}", json=takeover), "create", "policy")
    accounts = {
        "targetKind": "serviceaccount",
        "target": "all",
        "targetLinks": [],
        "$replace/bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
    }
    refused(mallory.api.patch(f"{POLICY}/{victim}", json=accounts), "addKey", "serviceaccount")
    put = {
        **before,
        "targetKind": "serviceaccount",
        "target": "all",
        "targetLinks": [],
        "bindings": [{"permissions": ["addKey"], "principalLinks": [mallory.link]}],
    }
    refused(mallory.api.put(f"{POLICY}/{victim}", json=put), "addKey", "serviceaccount")

    after = ok(admin.get(f"{POLICY}/{victim}"))
    assert after == before
    assert mallory.api.post(f"/org/{ORG}/serviceaccount/admin/-addKey", json={}).status_code == 403


def test_a_principal_may_grant_what_it_holds_and_nothing_more(
    admin: httpx.Client, mallory: Principal, server: ServerProcess
) -> None:
    friend = f"/org/{ORG}/serviceaccount/friend{next(_n)}"
    grant(admin, mallory, "gvc", ["view"])
    grant(admin, mallory, "policy", ["create", "edit", "view"])
    mine = f"mine{next(_n)}"
    body = {
        "name": mine,
        "targetKind": "gvc",
        "target": "all",
        "bindings": [{"permissions": ["view"], "principalLinks": [friend]}],
    }
    ok(mallory.api.post(POLICY, json=body), 201)
    # Query targets cover items made later: a grant on every gvc covers them.
    query = {
        "name": f"q{next(_n)}",
        "targetKind": "gvc",
        "targetQuery": {"spec": {"terms": [{"op": "=", "tag": "team", "value": "a"}]}},
        "bindings": [{"permissions": ["view"], "principalLinks": [friend]}],
    }
    ok(mallory.api.post(POLICY, json=query), 201)
    # More than it holds: edit on gvcs, or manage on the policy it writes.
    more = {"$replace/bindings": [{"permissions": ["view", "edit"], "principalLinks": [friend]}]}
    refused(mallory.api.patch(f"{POLICY}/{mine}", json=more), "edit", "gvc")
    itself = {
        "name": f"self{next(_n)}",
        "targetKind": "policy",
        "target": "all",
        "bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
    }
    refused(mallory.api.post(POLICY, json=itself), "delete", "policy")  # the first it lacks, by name
    assert admin.get(f"{POLICY}/{itself['name']}").status_code == 404


def test_a_link_target_needs_the_permission_on_each_item_linked(admin: httpx.Client, mallory: Principal) -> None:
    for name in ("ga", "gb"):
        if admin.get(f"/org/{ORG}/gvc/{name}").status_code == 404:
            ok(admin.post(f"/org/{ORG}/gvc", json={"name": name}), 201)
    friend = f"/org/{ORG}/serviceaccount/friend{next(_n)}"
    grant(admin, mallory, "gvc", ["edit"], links=[f"/org/{ORG}/gvc/ga"])
    mine = policy(admin, "gvc", ["edit"], friend, targetLinks=[f"/org/{ORG}/gvc/ga"])
    grant(admin, mallory, "policy", ["edit"], links=[f"{POLICY}/{mine}"])
    # Retargeting to an item it cannot edit, or to every gvc, is refused; its own item is fine.
    refused(
        mallory.api.patch(f"{POLICY}/{mine}", json={"targetLinks": [f"/org/{ORG}/gvc/ga", f"/org/{ORG}/gvc/gb"]}),
        "edit",
        "gvc",
    )
    refused(mallory.api.patch(f"{POLICY}/{mine}", json={"target": "all", "targetLinks": []}), "edit", "gvc")
    more = {
        "$replace/bindings": [{"permissions": ["edit"], "principalLinks": [friend, f"/org/{ORG}/serviceaccount/other"]}]
    }
    ok(mallory.api.patch(f"{POLICY}/{mine}", json=more))


def test_grants_already_conferred_are_not_judged_again(admin: httpx.Client, mallory: Principal) -> None:
    """Mallory may describe, tag, narrow and trim a policy granting what it does not hold."""
    strong = policy(admin, "secret", ["manage"], f"/org/{ORG}/group/superusers", target="all")
    grant(admin, mallory, "policy", ["edit"], links=[f"{POLICY}/{strong}"])
    ok(mallory.api.patch(f"{POLICY}/{strong}", json={"description": "reviewed", "tags": {"owner": "mallory"}}))
    ok(
        mallory.api.patch(
            f"{POLICY}/{strong}",
            json={"$replace/bindings": [{"permissions": ["view"], "principalLinks": [f"/org/{ORG}/group/superusers"]}]},
        )
    )
    # Putting back what it took away is granting again: refused.
    back = {"$replace/bindings": [{"permissions": ["manage"], "principalLinks": [f"/org/{ORG}/group/superusers"]}]}
    refused(mallory.api.patch(f"{POLICY}/{strong}", json=back), "create", "secret")


def test_manage_on_one_policy_is_not_the_right_to_escalate(admin: httpx.Client, mallory: Principal) -> None:
    """``manage`` on a single policy lets its holder retarget that policy to every policy and
    grant itself ``manage`` there: it must not be the escalate-like right. Only ``manage`` on
    every policy (an org administrator's, as the built-in superusers hold) is."""
    target = policy(admin, "gvc", ["view"], f"/org/{ORG}/group/viewers", target="all")
    grant(admin, mallory, "policy", ["manage"], links=[f"{POLICY}/{target}"])
    before = ok(admin.get(f"{POLICY}/{target}"))
    takeover = {
        "targetKind": "policy",
        "$replace/bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
    }
    refused(mallory.api.patch(f"{POLICY}/{target}", json=takeover), "create", "policy")
    secrets = {
        "targetKind": "secret",
        "$replace/bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
    }
    refused(mallory.api.patch(f"{POLICY}/{target}", json=secrets), "create", "secret")
    assert ok(admin.get(f"{POLICY}/{target}")) == before
    # What it holds itself, it may still grant through the policy it manages.
    grant(admin, mallory, "gvc", ["view"])
    mine = {"$replace/bindings": [{"permissions": ["view"], "principalLinks": [mallory.link]}]}
    ok(mallory.api.patch(f"{POLICY}/{target}", json=mine))


def test_manage_on_every_policy_is_the_right_to_escalate(admin: httpx.Client, mallory: Principal) -> None:
    """As ``escalate`` on a Kubernetes role: documented as an administrator's right."""
    target = policy(admin, "gvc", ["view"], f"/org/{ORG}/group/viewers", target="all")
    grant(admin, mallory, "policy", ["manage"])
    ok(
        mallory.api.patch(
            f"{POLICY}/{target}",
            json={
                "targetKind": "secret",
                "$replace/bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
            },
        )
    )
    # The built-in superusers hold manage on every policy: the admin writes anything.
    ok(
        admin.post(
            POLICY,
            json={
                "name": f"any{next(_n)}",
                "targetKind": "org",
                "target": "all",
                "bindings": [{"permissions": ["manage"], "principalLinks": [mallory.link]}],
            },
        ),
        201,
    )


def test_edit_on_a_group_does_not_let_a_principal_join_what_it_could_not_grant(
    admin: httpx.Client, mallory: Principal
) -> None:
    """With ``edit`` on ``superusers``, adding oneself was org admin: a member gets the group's grants."""
    grant(admin, mallory, "group", ["edit", "view"])
    before = ok(admin.get(f"/org/{ORG}/group/superusers"))
    joined = mallory.api.patch(
        f"/org/{ORG}/group/superusers", json={"memberLinks": [*before["memberLinks"], mallory.link]}
    )
    assert joined.status_code == 403, joined.text
    assert "A new member of this group would get" in joined.json()["message"]
    query = {"memberQuery": {"spec": {"terms": [{"op": "=", "property": "email", "value": "m@example.com"}]}}}
    assert mallory.api.patch(f"/org/{ORG}/group/superusers", json=query).status_code == 403
    assert ok(admin.get(f"/org/{ORG}/group/superusers")) == before
    # Creating a group a policy already binds is joining it too.
    pending = f"pending{next(_n)}"
    policy(admin, "secret", ["reveal"], f"/org/{ORG}/group/{pending}", target="all")
    grant(admin, mallory, "group", ["create"])
    made = mallory.api.post(f"/org/{ORG}/group", json={"name": pending, "memberLinks": [mallory.link]})
    assert made.status_code == 403, made.text
    assert made.json()["details"]["kind"] == "secret"


def test_a_group_may_gain_members_from_whom_holds_its_grants(admin: httpx.Client, mallory: Principal) -> None:
    team = f"team{next(_n)}"
    ok(admin.post(f"/org/{ORG}/group", json={"name": team}), 201)
    policy(admin, "gvc", ["view"], f"/org/{ORG}/group/{team}", target="all")
    grant(admin, mallory, "group", ["edit"], links=[f"/org/{ORG}/group/{team}"])
    friend = f"/org/{ORG}/serviceaccount/friend{next(_n)}"
    assert mallory.api.patch(f"/org/{ORG}/group/{team}", json={"memberLinks": [friend]}).status_code == 403
    grant(admin, mallory, "gvc", ["view"])
    ok(mallory.api.patch(f"/org/{ORG}/group/{team}", json={"memberLinks": [friend]}))
    ok(mallory.api.patch(f"/org/{ORG}/group/{team}", json={"description": "the team", "memberLinks": []}))


def test_manage_on_one_group_is_not_the_right_to_join_it(admin: httpx.Client, mallory: Principal) -> None:
    """``manage`` on ``superusers`` alone is not the escalate-like right: joining it is refused."""
    grant(admin, mallory, "group", ["manage"], links=[f"/org/{ORG}/group/superusers"])
    before = ok(admin.get(f"/org/{ORG}/group/superusers"))
    joined = mallory.api.patch(
        f"/org/{ORG}/group/superusers", json={"memberLinks": [*before["memberLinks"], mallory.link]}
    )
    assert joined.status_code == 403, joined.text
    assert ok(admin.get(f"/org/{ORG}/group/superusers")) == before


def test_editing_a_user_into_a_member_query_group_is_judged_as_joining_it(
    admin: httpx.Client, mallory: Principal
) -> None:
    """A group's ``memberQuery`` matches users by their fields: with ``edit`` on users, tagging a
    user so it matches a strong group gives the user that group's grants, so it is judged so."""
    strong = f"strong{next(_n)}"
    role = {"op": "=", "tag": "role", "value": strong}
    ok(admin.post(f"/org/{ORG}/group", json={"name": strong, "memberQuery": {"spec": {"terms": [role]}}}), 201)
    policy(admin, "secret", ["reveal"], f"/org/{ORG}/group/{strong}", target="all")
    email = f"bob{next(_n)}@example.com"
    ok(admin.post(f"/org/{ORG}/user/-invite", json={"emails": [email]}))
    grant(admin, mallory, "user", ["edit", "view"])
    before = ok(admin.get(f"/org/{ORG}/user/{email}"))
    joined = mallory.api.patch(f"/org/{ORG}/user/{email}", json={"tags": {"role": strong}})
    refused(joined, "reveal", "secret")
    assert ok(admin.get(f"/org/{ORG}/user/{email}")) == before
    # Other tags are the user's own business; and holding what the group holds, it may tag.
    ok(mallory.api.patch(f"/org/{ORG}/user/{email}", json={"tags": {"team": "a"}}))
    grant(admin, mallory, "secret", ["reveal"])
    ok(mallory.api.patch(f"/org/{ORG}/user/{email}", json={"tags": {"role": strong}}))


def test_creating_a_principal_a_policy_already_names_is_judged_on_its_grants(
    admin: httpx.Client, mallory: Principal
) -> None:
    """Policies may name principals before they exist: creating the service account a policy
    names, then adding a key to it, was acting with that policy's grants."""
    grant(admin, mallory, "serviceaccount", ["create", "addKey", "view"])
    deployer = f"deployer{next(_n)}"
    policy(admin, "secret", ["reveal"], f"/org/{ORG}/serviceaccount/{deployer}", target="all")
    made = mallory.api.post(f"/org/{ORG}/serviceaccount", json={"name": deployer})
    refused(made, "reveal", "secret")
    assert admin.get(f"/org/{ORG}/serviceaccount/{deployer}").status_code == 404
    # An account no policy names is the creator's to make; and what it holds, it may pass on.
    ok(mallory.api.post(f"/org/{ORG}/serviceaccount", json={"name": f"plain{next(_n)}"}), 201)
    grant(admin, mallory, "secret", ["reveal"])
    ok(mallory.api.post(f"/org/{ORG}/serviceaccount", json={"name": deployer}), 201)
