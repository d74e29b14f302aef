"""Identity and access endpoints (issue 3; docs.controlplane.com/reference/user, .../serviceaccount, .../group and
.../policy), through real HTTP on both backends: the bootstrap built-ins, keys, the built-in rules, the permissions
schema, access reports, who made each change, and orgs sealed from each other."""

from __future__ import annotations

import stat
from typing import Any

import httpx
import pytest

from tests.api.authz_support import assert_forbidden, assert_hidden, every_item, ok, service_account_with_key
from tests.support.server import ServerProcess

ORG = "acme"
SERVED_KINDS = (
    "auditctx", "domain", "group", "gvc", "identity", "ipset", "org", "policy", "serviceaccount", "user", "volumeset",
    "workload",
)  # fmt: skip


def _policy(name: str, kind: str, permissions: list[str], principals: list[str], **target: Any) -> dict[str, Any]:
    return {
        "name": name,
        "targetKind": kind,
        **(target or {"target": "all"}),
        "bindings": [{"permissions": permissions, "principalLinks": principals}],
    }


def _grant(api: httpx.Client, name: str, kind: str, permissions: list[str], principal: str, **target: Any) -> None:
    ok(api.post(f"/org/{ORG}/policy", json=_policy(name, kind, permissions, [principal], **target)), 201)


# -- bootstrap -----------------------------------------------------------------------------------


def test_bootstrap_builtins_exist_with_origin_builtin(api: httpx.Client) -> None:
    groups = {g["name"]: g for g in every_item(api, api.get(f"/org/{ORG}/group"))}
    assert groups["superusers"]["origin"] == "builtin" and groups["viewers"]["origin"] == "builtin"
    assert f"/org/{ORG}/serviceaccount/admin" in groups["superusers"]["memberLinks"]
    policies = {p["name"]: p for p in every_item(api, api.get(f"/org/{ORG}/policy"))}
    for kind in SERVED_KINDS:
        for group, permission in (("superusers", "manage"), ("viewers", "view")):
            policy = policies[f"{group}-{kind}"]
            assert policy["origin"] == "builtin" and policy["targetKind"] == kind and policy["target"] == "all"
            assert policy["bindings"] == [
                {"permissions": [permission], "principalLinks": [f"/org/{ORG}/group/{group}"]}
            ]
    assert ok(api.get(f"/org/{ORG}/serviceaccount/admin"))["keys"], "the bootstrap admin holds its key"


def test_the_admin_key_is_written_0600_and_printed_once(server: ServerProcess) -> None:
    path = server.data_dir / "bootstrap-admin.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == server.key
    assert sum(line.count(server.key) for line in server.log_lines()) == 1


def test_client_policies_and_groups_get_origin_default_and_cannot_claim_builtin(api: httpx.Client, unique: str) -> None:
    body = {"name": unique, "origin": "builtin", "memberLinks": []}
    assert ok(api.post(f"/org/{ORG}/group", json=body), 201)["origin"] == "default"
    assert ok(api.delete(f"/org/{ORG}/group/{unique}"), 202) is None


# -- keys ------------------------------------------------------------------------------------------


def test_add_key_returns_the_secret_once_and_the_key_works(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": unique}), 201)
    r = api.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json={"description": "ci"})
    minted = ok(r, 201)
    assert set(minted) == {"name", "created", "key", "description"}
    assert minted["description"] == "ci" and minted["created"].endswith("Z")
    key = minted["key"]
    assert key.split(".")[0] == minted["name"] and len(minted["name"]) == 16 and key.startswith("s")

    stored = api.get(f"/org/{ORG}/serviceaccount/{unique}")
    assert ok(stored)["keys"] == [{"name": minted["name"], "created": minted["created"], "description": "ci"}]
    listed = api.get(f"/org/{ORG}/serviceaccount")
    queried = api.post(
        f"/org/{ORG}/serviceaccount/-query", json={"spec": {"terms": [{"property": "name", "value": unique}]}}
    )
    for r in (stored, listed, queried, api.get(f"/org/{ORG}/serviceaccount/{unique}/-eventlog")):
        assert key not in r.text and key.split(".", 2)[2] not in r.text

    with server.client(key) as robot:
        # Authenticated (not 401), holds nothing: the org answers as a missing one (docs/api.md, "Errors").
        assert_hidden(robot.get(f"/org/{ORG}"), "org", ORG)
        ok(api.patch(f"/org/{ORG}/group/viewers", json={"$append/memberLinks": [f"//serviceaccount/{unique}"]}))
        try:
            assert ok(robot.get(f"/org/{ORG}"))["name"] == ORG
        finally:
            ok(
                api.patch(
                    f"/org/{ORG}/group/viewers", json={"$drop/memberLinks": [f"/org/{ORG}/serviceaccount/{unique}"]}
                )
            )


def test_add_key_needs_a_description(api: httpx.Client, unique: str) -> None:
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": unique}), 201)
    for body in ({}, {"description": ""}, {"description": "x" * 251}):
        assert api.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json=body).status_code == 400
    assert ok(api.get(f"/org/{ORG}/serviceaccount/{unique}"))["keys"] == []


def test_a_new_key_is_listed_last_on_the_account_without_its_secret(api: httpx.Client, unique: str) -> None:
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": unique}), 201)
    ok(api.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json={"description": "first"}), 201)
    added = ok(api.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json={"description": "ci key"}), 201)
    account = ok(api.get(f"/org/{ORG}/serviceaccount/{unique}"))
    assert account["keys"][-1] == {k: added[k] for k in ("name", "created", "description")}
    assert api.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json={"description": " padded"}).status_code == 400
    missing = api.post(f"/org/{ORG}/serviceaccount/no-such-account/-addKey", json={"description": "ci"})
    assert missing.status_code == 404


def test_dropping_a_key_revokes_it_at_once_and_only_it(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    first = service_account_with_key(api, ORG, unique)
    second = ok(api.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json={"description": "two"}), 201)["key"]
    _grant(api, unique, "org", ["view"], f"//serviceaccount/{unique}")
    with server.client(first) as one, server.client(second) as two:
        assert one.get(f"/org/{ORG}").status_code == 200 and two.get(f"/org/{ORG}").status_code == 200
        dropped = ok(api.patch(f"/org/{ORG}/serviceaccount/{unique}", json={"$drop/keys": [first.split(".")[0]]}))
        assert [k["name"] for k in dropped["keys"]] == [second.split(".")[0]]
        # No wait: the same server answers the next request with the key revoked.
        assert one.get(f"/org/{ORG}").status_code == 401
        assert two.get(f"/org/{ORG}").status_code == 200


def test_keys_cannot_be_written_except_dropped(api: httpx.Client, unique: str) -> None:
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": unique}), 201)
    forged = [{"name": "sforgedforgedfor", "created": "2020-01-01T00:00:00Z", "description": "x"}]
    for r in (
        api.patch(f"/org/{ORG}/serviceaccount/{unique}", json={"keys": forged}),
        api.patch(f"/org/{ORG}/serviceaccount/{unique}", json={"$append/keys": forged}),
        api.put(f"/org/{ORG}/serviceaccount/{unique}", json={"name": unique, "keys": forged}),
    ):
        assert r.status_code in (200, 400), r.text
    assert ok(api.get(f"/org/{ORG}/serviceaccount/{unique}"))["keys"] == []


# -- built-in rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["group/superusers", "group/viewers", "policy/superusers-gvc", "policy/viewers-org"])
def test_builtins_cannot_be_deleted(api: httpx.Client, path: str) -> None:
    r = api.delete(f"/org/{ORG}/{path}")
    assert r.status_code == 409 and r.json()["code"] == "conflict", r.text
    assert ok(api.get(f"/org/{ORG}/{path}"))["origin"] == "builtin"


def test_builtin_policies_cannot_be_edited(api: httpx.Client) -> None:
    path = f"/org/{ORG}/policy/viewers-gvc"
    before = ok(api.get(path))
    everything = {"permissions": ["manage"], "principalLinks": [f"/org/{ORG}/group/viewers"]}
    for r in (
        api.patch(path, json={"description": "edited"}),
        api.patch(path, json={"bindings": [everything]}),
        api.put(path, json={**_policy("viewers-gvc", "gvc", ["manage"], ["//group/viewers"])}),
        api.put(f"/org/{ORG}/policy", json={**_policy("viewers-gvc", "gvc", ["manage"], ["//group/viewers"])}),
    ):
        assert r.status_code == 409 and r.json()["code"] == "conflict", r.text
    assert ok(api.get(path)) == before


def test_builtin_group_membership_can_be_edited(api: httpx.Client, unique: str) -> None:
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": unique}), 201)
    added = ok(api.patch(f"/org/{ORG}/group/viewers", json={"$append/memberLinks": [f"//serviceaccount/{unique}"]}))
    assert f"/org/{ORG}/serviceaccount/{unique}" in added["memberLinks"]
    dropped = ok(
        api.patch(f"/org/{ORG}/group/viewers", json={"$drop/memberLinks": [f"/org/{ORG}/serviceaccount/{unique}"]})
    )
    assert f"/org/{ORG}/serviceaccount/{unique}" not in dropped["memberLinks"]


def test_dropping_a_member_by_its_short_link_removes_it(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    """Links are stored in full form; a $drop naming the short form (or another case of a user's
    email) must still remove the member, or a member the client removed keeps its access."""
    key = service_account_with_key(api, ORG, unique)
    members = [f"//serviceaccount/{unique}", "//serviceaccount/admin", "//user/ada@example.com"]
    ok(api.post(f"/org/{ORG}/group", json={"name": unique, "memberLinks": members}), 201)
    _grant(api, unique, "org", ["view"], f"//group/{unique}")
    with server.client(key) as member:
        assert ok(member.get(f"/org/{ORG}"))["name"] == ORG
        drop = {"$drop/memberLinks": [f"//serviceaccount/{unique}", "//user/Ada@Example.com"]}
        assert ok(api.patch(f"/org/{ORG}/group/{unique}", json=drop))["memberLinks"] == [
            f"/org/{ORG}/serviceaccount/admin"
        ]
        assert_hidden(member.get(f"/org/{ORG}"), "org", ORG)
    policy = {"$drop/targetLinks": ["//gvc/a"]}
    ok(
        api.post(
            f"/org/{ORG}/policy",
            json=_policy(
                f"{unique}-t", "gvc", ["view"], ["//group/viewers"], targetLinks=["//gvc/a", f"/org/{ORG}/gvc/b"]
            ),
        ),
        201,
    )
    assert ok(api.patch(f"/org/{ORG}/policy/{unique}-t", json=policy))["targetLinks"] == [f"/org/{ORG}/gvc/b"]


def test_superusers_cannot_be_left_without_a_member(api: httpx.Client) -> None:
    path = f"/org/{ORG}/group/superusers"
    before = ok(api.get(path))
    only = before["memberLinks"]
    for r in (
        api.patch(path, json={"memberLinks": []}),
        api.patch(path, json={"memberLinks": None}),
        api.patch(path, json={"$drop/memberLinks": only}),
        api.put(path, json={"name": "superusers"}),
    ):
        assert r.status_code == 400, r.text
        assert r.json()["details"]["errors"][0]["path"] == "memberLinks"
    assert ok(api.get(path)) == before


# -- exporters read as the caller ------------------------------------------------------------------


def test_exporters_show_only_what_the_caller_may_view(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    key = _query_grant(api, unique, ["view"])
    for name, team in ((f"{unique}-mine", unique), (f"{unique}-not", "other")):
        ok(api.post(f"/org/{ORG}/gvc", json={"name": name, "tags": {"team": team}}), 201)
    with server.client(key) as robot:
        assert ok(robot.get(f"/export/crd/org/{ORG}/gvc/{unique}-mine"))
        assert_hidden(robot.get(f"/export/crd/org/{ORG}/gvc/{unique}-not"), "gvc", f"{unique}-not")
        assert_hidden(robot.get(f"/export/terraform/org/{ORG}/gvc/{unique}-not"), "gvc", f"{unique}-not")
        listed = ok(robot.get(f"/export/crd/org/{ORG}/gvc"))
        assert len(listed["items"]) == 1 and f"{unique}-mine" in str(listed["items"][0])
        terraform = robot.get(f"/export/terraform/org/{ORG}/gvc")
        assert (
            terraform.status_code == 200
            and f"{unique}-mine" in terraform.text
            and f"{unique}-not" not in terraform.text
        )


# -- PUT (cpln apply) ---------------------------------------------------------------------------------


def test_put_needs_create_for_a_new_item_and_edit_for_an_existing_one(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    creator_key = service_account_with_key(api, ORG, f"{unique}-c")
    editor_key = service_account_with_key(api, ORG, f"{unique}-e")
    _grant(api, f"{unique}-c", "gvc", ["create"], f"//serviceaccount/{unique}-c")
    _grant(api, f"{unique}-e", "gvc", ["edit"], f"//serviceaccount/{unique}-e")
    ok(api.post(f"/org/{ORG}/gvc", json={"name": unique, "description": "before"}), 201)
    with server.client(creator_key) as creator, server.client(editor_key) as editor:
        # The creator may not view the existing item: its PUT answers as its POST would, 409
        # (docs/api.md, "Errors"); the item is unchanged (checked below).
        for taken in (
            creator.put(f"/org/{ORG}/gvc", json={"name": unique, "description": "c"}),
            creator.put(f"/org/{ORG}/gvc/{unique}", json={"name": unique, "description": "c"}),
        ):
            assert taken.status_code == 409 and taken.json()["code"] == "conflict", taken.text
        assert_forbidden(editor.put(f"/org/{ORG}/gvc", json={"name": f"{unique}-new"}), "create")
        assert_forbidden(editor.put(f"/org/{ORG}/gvc/{unique}-new", json={"name": f"{unique}-new"}), "create")
        assert ok(api.get(f"/org/{ORG}/gvc/{unique}"))["description"] == "before"
        assert api.get(f"/org/{ORG}/gvc/{unique}-new").status_code == 404
        assert ok(editor.put(f"/org/{ORG}/gvc", json={"name": unique, "description": "e"}))["description"] == "e"
        assert ok(creator.put(f"/org/{ORG}/gvc", json={"name": f"{unique}-new"}), 201)["name"] == f"{unique}-new"


# -- cached decisions are made on what they depend on ----------------------------------------------


def _query_grant(api: httpx.Client, unique: str, permissions: list[str]) -> str:
    """A service account holding ``permissions`` on gvcs tagged ``team=<unique>``; its key."""
    key = service_account_with_key(api, ORG, unique)
    query = {"spec": {"terms": [{"op": "=", "tag": "team", "value": unique}]}}
    ok(
        api.post(
            f"/org/{ORG}/policy",
            json=_policy(unique, "gvc", permissions, [f"//serviceaccount/{unique}"], targetQuery=query),
        ),
        201,
    )
    return key


def test_a_create_is_judged_on_its_own_candidate(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    """A targetQuery covers a new item by what the item will hold: an earlier request for the same
    name (a dry run, a refused try) must not decide a later one."""
    key = _query_grant(api, unique, ["create"])
    tagged = {"tags": {"team": unique}}
    with server.client(key) as robot:
        ok(robot.post(f"/org/{ORG}/gvc?dryRun=true", json={"name": f"{unique}-a", **tagged}))
        assert_forbidden(robot.post(f"/org/{ORG}/gvc", json={"name": f"{unique}-a"}), "create")
        assert api.get(f"/org/{ORG}/gvc/{unique}-a").status_code == 404

        assert_forbidden(robot.post(f"/org/{ORG}/gvc", json={"name": f"{unique}-b"}), "create")
        assert ok(robot.post(f"/org/{ORG}/gvc", json={"name": f"{unique}-b", **tagged}), 201)["name"] == f"{unique}-b"


def test_an_item_made_again_under_the_same_name_is_judged_afresh(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    """Versions start again at 1 when an item is deleted and made again; a decision about the
    old item must not carry over to the new one."""
    key = _query_grant(api, unique, ["view", "edit"])
    path = f"/org/{ORG}/gvc/{unique}"
    ok(api.post(f"/org/{ORG}/gvc", json={"name": unique, "tags": {"team": unique}}), 201)
    with server.client(key) as robot:
        assert ok(robot.get(path))["version"] == 1
        assert api.delete(path).status_code == 202
        assert ok(api.post(f"/org/{ORG}/gvc", json={"name": unique, "tags": {"team": "other"}}), 201)["version"] == 1
        assert_hidden(robot.get(path), "gvc", unique)
        assert_hidden(robot.patch(path, json={"description": "not mine"}), "gvc", unique)
        assert every_item(robot, robot.get(f"/org/{ORG}/gvc")) == []
    assert ok(api.get(path))["description"] != "not mine"


# -- deleted principals --------------------------------------------------------------------------


def test_a_recreated_service_account_inherits_nothing(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    """Deleting a service account revokes its keys, and its grants with them: whoever makes an
    account of the same name later (serviceaccount create is enough) must not find them again."""
    old_key = service_account_with_key(api, ORG, unique)
    me = f"/org/{ORG}/serviceaccount/{unique}"
    members = [f"//serviceaccount/{unique}", "//serviceaccount/admin"]
    ok(api.post(f"/org/{ORG}/group", json={"name": unique, "memberLinks": members}), 201)
    _grant(api, f"{unique}-via-group", "org", ["view"], f"//group/{unique}")
    both = _policy(f"{unique}-direct", "gvc", ["view"], [f"//serviceaccount/{unique}", "//group/viewers"])
    ok(api.post(f"/org/{ORG}/policy", json=both), 201)
    _grant(api, f"{unique}-alone", "domain", ["view"], f"//serviceaccount/{unique}")
    with server.client(old_key) as old:
        assert ok(old.get(f"/org/{ORG}"))["name"] == ORG

    assert api.delete(f"/org/{ORG}/serviceaccount/{unique}").status_code == 202
    group = ok(api.get(f"/org/{ORG}/group/{unique}"))
    assert group["memberLinks"] == [f"/org/{ORG}/serviceaccount/admin"]
    assert ok(api.get(f"/org/{ORG}/policy/{unique}-direct"))["bindings"] == [
        {"permissions": ["view"], "principalLinks": [f"/org/{ORG}/group/viewers"]}
    ]
    assert ok(api.get(f"/org/{ORG}/policy/{unique}-alone"))["bindings"] == []
    events = every_item(api, api.get(f"/org/{ORG}/group/{unique}/-eventlog"))
    assert (events[-1]["status"], events[-1]["context"]["principalLink"]) == (
        "updated",
        f"/org/{ORG}/serviceaccount/admin",
    )
    # What referred to it stays editable (no dangling link to trip the reference check).
    assert ok(api.patch(f"/org/{ORG}/group/{unique}", json={"description": "still editable"}))

    new_key = service_account_with_key(api, ORG, unique)
    with server.client(new_key) as heir, server.client(old_key) as old:
        assert old.get(f"/org/{ORG}").status_code == 401
        assert_hidden(heir.get(f"/org/{ORG}"), "org", ORG)
        assert every_item(heir, heir.get(f"/org/{ORG}/gvc")) == []
        assert every_item(heir, heir.get(f"/org/{ORG}/domain")) == []
    assert me not in str(ok(api.get(f"/org/{ORG}/policy/{unique}-direct")))


def test_a_recreated_group_inherits_nothing(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    key = service_account_with_key(api, ORG, unique)
    ok(api.post(f"/org/{ORG}/group", json={"name": unique, "memberLinks": [f"//serviceaccount/{unique}"]}), 201)
    _grant(api, unique, "org", ["view"], f"//group/{unique}")
    with server.client(key) as member:
        assert ok(member.get(f"/org/{ORG}"))["name"] == ORG
        assert api.delete(f"/org/{ORG}/group/{unique}").status_code == 202
        assert ok(api.get(f"/org/{ORG}/policy/{unique}"))["bindings"] == []
        ok(api.post(f"/org/{ORG}/group", json={"name": unique, "memberLinks": [f"//serviceaccount/{unique}"]}), 201)
        assert_hidden(member.get(f"/org/{ORG}"), "org", ORG)


def test_the_last_member_of_superusers_cannot_be_deleted(api: httpx.Client, beta: str) -> None:
    """A new org's superusers holds only its admin account: deleting that account would leave
    the org with no one to manage it."""
    path = f"/org/{beta}/serviceaccount/admin"
    for r in (api.delete(f"{path}?dryRun=true"), api.delete(path)):
        assert r.status_code == 409 and r.json()["code"] == "conflict", r.text
        assert "superusers" in r.json()["message"]
    assert ok(api.get(path))["name"] == "admin"
    assert ok(api.get(f"/org/{beta}/group/superusers"))["memberLinks"] == [path]


# -- permissions schema and access reports ---------------------------------------------------------


def test_schema_permissions_shape(api: httpx.Client) -> None:
    sa = ok(api.get(f"/org/{ORG}/serviceaccount/-schema/permissions"))
    assert sa["kind"] == "permissions" and sa["targetKind"] == "serviceaccount"
    assert {i["name"] for i in sa["items"]} == {"addKey", "create", "delete", "edit", "manage", "view"}
    assert all(isinstance(i["description"], str) and i["description"] for i in sa["items"])
    assert sa["implied"]["edit"] == ["view"]
    assert set(sa["implied"]["manage"]) == {"addKey", "create", "delete", "edit", "manage", "view"}
    assert {"rel": "self", "href": f"/org/{ORG}/serviceaccount/-schema/permissions"} in sa["links"]
    policy = ok(api.get(f"/org/{ORG}/policy/-schema/permissions"))
    assert {i["name"] for i in policy["items"]} == {"create", "delete", "edit", "manage", "view"}
    for kind in SERVED_KINDS:
        if kind == "org":
            continue  # its own test, below
        schema = ok(api.get(f"/org/{ORG}/{kind}/-schema/permissions"))
        assert schema["targetKind"] == kind and "view" in {i["name"] for i in schema["items"]}
        assert "view" in schema["implied"]["edit"]
    assert api.get(f"/org/{ORG}/spaceship/-schema/permissions").status_code == 404


def test_the_org_permissions_schema_is_reachable(api: httpx.Client) -> None:
    """Policies may target the org (targetKind org), so its permissions must be readable at the
    same path as every kind's: /org/{org}/org/-schema/permissions."""
    schema = ok(api.get(f"/org/{ORG}/org/-schema/permissions"))
    assert schema["kind"] == "permissions" and schema["targetKind"] == "org"
    names = {i["name"] for i in schema["items"]}
    assert {"edit", "manage", "view"} <= names and not {"create", "delete"} & names
    assert schema["implied"]["edit"] == ["view"]
    assert {"rel": "self", "href": f"/org/{ORG}/org/-schema/permissions"} in schema["links"]
    # Only the schema: orgs still do not nest.
    for path in (f"/org/{ORG}/org", f"/org/{ORG}/org/{ORG}", f"/org/{ORG}/org/-query"):
        assert api.get(path).status_code == 404
    # Under a name no org can have (this key is the server admin's, so it is not a 401), like any path.
    invalid = api.get("/org/Not_An_Org/org/-schema/permissions")
    assert invalid.status_code == 404 and invalid.json()["details"] == {"kind": "org", "name": "Not_An_Org"}


def test_access_report_says_who_holds_what_through_which_policy(api: httpx.Client, unique: str) -> None:
    ok(api.post(f"/org/{ORG}/gvc", json={"name": unique, "tags": {"report": unique}}), 201)
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": unique}), 201)
    ok(api.post(f"/org/{ORG}/group", json={"name": unique, "memberLinks": [f"//serviceaccount/{unique}"]}), 201)
    by_link = _policy(
        f"{unique}-link", "gvc", ["view"], [f"//serviceaccount/{unique}"], targetLinks=[f"//gvc/{unique}"]
    )
    query = {"spec": {"terms": [{"op": "=", "tag": "report", "value": unique}]}}
    by_query = _policy(f"{unique}-query", "gvc", ["edit"], [f"//group/{unique}"], targetQuery=query)
    other = _policy(f"{unique}-other", "gvc", ["delete"], [f"//group/{unique}"], targetLinks=["//gvc/somewhere-else"])
    for body in (by_link, by_query, other):
        ok(api.post(f"/org/{ORG}/policy", json=body), 201)

    report = ok(api.get(f"/org/{ORG}/gvc/{unique}/-accessreport"))
    assert report["kind"] == "accessreport" and report["created"]
    assert {"rel": "self", "href": f"/org/{ORG}/gvc/{unique}/-accessreport"} in report["links"]
    held = {p["name"]: p for p in report["permissions"]}
    assert set(held) >= {"create", "delete", "edit", "manage", "view"}
    assert all(p["description"] for p in report["permissions"])

    sa, group, superusers, viewers = (
        f"/org/{ORG}/serviceaccount/{unique}",
        f"/org/{ORG}/group/{unique}",
        f"/org/{ORG}/group/superusers",
        f"/org/{ORG}/group/viewers",
    )

    def rows(permission: str) -> set[tuple[str, str, tuple[str, ...], str]]:
        """The report's rows from the built-ins and the policies this test set up (other tests
        of this module may hold grants on every gvc)."""
        mine = {f"{unique}-link", f"{unique}-query", f"{unique}-other", "superusers-gvc", "viewers-gvc"}
        out = {
            (b["principalLink"], b["grantingPolicyLink"].rsplit("/", 1)[-1], tuple(b["grantedPermissions"]), b["match"])
            for b in held[permission]["bindings"]
        }
        return {row for row in out if row[1] in mine}

    assert rows("view") == {
        (sa, f"{unique}-link", ("view",), "link"),
        (group, f"{unique}-query", ("edit",), "query"),
        (superusers, "superusers-gvc", ("manage",), "all"),
        (viewers, "viewers-gvc", ("view",), "all"),
    }
    assert rows("edit") == {
        (group, f"{unique}-query", ("edit",), "query"),
        (superusers, "superusers-gvc", ("manage",), "all"),
    }
    assert rows("delete") == {(superusers, "superusers-gvc", ("manage",), "all")}  # "other" does not cover it
    assert all(
        b["grantingPolicyLink"].startswith(f"/org/{ORG}/policy/") for p in report["permissions"] for b in p["bindings"]
    )


# -- who made each change ---------------------------------------------------------------------------


def test_every_event_names_the_principal_that_made_the_change(
    server: ServerProcess, api: httpx.Client, unique: str
) -> None:
    actor_key = service_account_with_key(api, ORG, unique)
    actor = f"/org/{ORG}/serviceaccount/{unique}"
    admin = f"/org/{ORG}/serviceaccount/admin"
    _grant(api, unique, "gvc", ["manage"], f"//serviceaccount/{unique}")
    _grant(api, f"{unique}-keys", "serviceaccount", ["addKey", "edit"], f"//serviceaccount/{unique}")
    target = f"{unique}-t"
    ok(api.post(f"/org/{ORG}/serviceaccount", json={"name": target}), 201)
    with server.client(actor_key) as robot:
        ok(robot.post(f"/org/{ORG}/gvc", json={"name": unique}), 201)
        ok(robot.patch(f"/org/{ORG}/gvc/{unique}", json={"description": "by the robot"}))
        ok(api.patch(f"/org/{ORG}/gvc/{unique}", json={"description": "by the admin"}))
        assert robot.delete(f"/org/{ORG}/gvc/{unique}").status_code == 202
        minted = ok(robot.post(f"/org/{ORG}/serviceaccount/{target}/-addKey", json={"description": "by robot"}), 201)
        ok(api.patch(f"/org/{ORG}/serviceaccount/{target}", json={"$drop/keys": [minted["name"]]}))

    gvc_events = every_item(api, api.get(f"/org/{ORG}/gvc/{unique}/-eventlog"))
    assert [(e["status"], e["context"]["principalLink"]) for e in gvc_events] == [
        ("created", actor),
        ("updated", actor),
        ("updated", admin),
        ("deleted", actor),
    ]
    sa_events = every_item(api, api.get(f"/org/{ORG}/serviceaccount/{target}/-eventlog"))
    assert [e["context"]["principalLink"] for e in sa_events] == [admin, actor, admin]
    policy_events = every_item(api, api.get(f"/org/{ORG}/policy/{unique}/-eventlog"))
    assert [e["context"]["principalLink"] for e in policy_events] == [admin]
    for event in gvc_events + sa_events + policy_events:
        assert event["kind"] == "event" and event["context"]["link"].startswith(f"/org/{ORG}/")


# -- orgs sealed from each other --------------------------------------------------------------------


@pytest.fixture(scope="module")
def beta(api: httpx.Client) -> str:
    r = api.post("/org", json={"name": "beta"})
    assert r.status_code == 201, r.text
    return "beta"


def test_a_new_org_gets_the_same_builtins(api: httpx.Client, beta: str) -> None:
    group = ok(api.get(f"/org/{beta}/group/superusers"))
    assert group["origin"] == "builtin" and group["memberLinks"] == [f"/org/{beta}/serviceaccount/admin"]
    names = {p["name"] for p in every_item(api, api.get(f"/org/{beta}/policy"))}
    assert {f"{g}-{k}" for g in ("superusers", "viewers") for k in SERVED_KINDS} <= names


def test_without_the_server_admin_right_no_org_is_created(
    server: ServerProcess, api: httpx.Client, unique: str, beta: str
) -> None:
    key = service_account_with_key(api, ORG, unique)
    ok(api.patch(f"/org/{ORG}/group/superusers", json={"$append/memberLinks": [f"//serviceaccount/{unique}"]}))
    try:
        with server.client(key) as superuser:
            assert ok(superuser.get(f"/org/{ORG}"))["name"] == ORG  # manages acme ...
            for r in (
                superuser.post("/org", json={"name": f"{unique}-org"}),  # ... but creates no org
                superuser.put("/org", json={"name": f"{unique}-org"}),
            ):
                assert_forbidden(r, "org.create")
            # An org's own path belongs to that org: a key of acme proves nothing there.
            assert superuser.put(f"/org/{unique}-org", json={"name": f"{unique}-org"}).status_code == 401
            names = [o["name"] for o in every_item(superuser, superuser.get("/org"))]
            assert names == [ORG]  # only its own org, though beta exists
            assert superuser.get(f"/org/{beta}").status_code == 401
    finally:
        drop = {"$drop/memberLinks": [f"/org/{ORG}/serviceaccount/{unique}"]}
        ok(api.patch(f"/org/{ORG}/group/superusers", json=drop))
    assert api.get(f"/org/{unique}-org").status_code == 404


def test_the_server_admin_account_is_changed_only_by_the_server_admin(
    server: ServerProcess, api: httpx.Client, unique: str, beta: str
) -> None:
    """Whoever may add keys to acme's service accounts must not thereby become the server admin:
    a key of the account holding the server-admin right reads every org and creates orgs."""
    key = service_account_with_key(api, ORG, unique)
    _grant(api, unique, "serviceaccount", ["manage"], f"//serviceaccount/{unique}")
    admin_path = f"/org/{ORG}/serviceaccount/admin"
    before = ok(api.get(admin_path))
    with server.client(key) as keymaster:
        # It manages service accounts ...
        assert ok(keymaster.post(f"/org/{ORG}/serviceaccount/{unique}/-addKey", json={"description": "own"}), 201)
        # ... but not the one holding the server-admin right.
        assert_forbidden(keymaster.post(f"{admin_path}/-addKey", json={"description": "mine now"}), "server-admin")
        assert_forbidden(
            keymaster.patch(admin_path, json={"$drop/keys": [k["name"] for k in before["keys"]]}), "server-admin"
        )
        assert_forbidden(keymaster.patch(admin_path, json={"description": "mine"}), "server-admin")
        assert_forbidden(
            keymaster.put(f"/org/{ORG}/serviceaccount", json={"name": "admin", "description": "mine"}), "server-admin"
        )
        assert_forbidden(keymaster.delete(admin_path), "server-admin")
        assert keymaster.get(f"/org/{beta}/group/superusers").status_code == 401
    assert ok(api.get(admin_path)) == before
    # The server admin rotates its own keys; the account itself is never deleted (it holds the right).
    rotated = ok(api.post(f"{admin_path}/-addKey", json={"description": "rotation"}), 201)
    ok(api.patch(admin_path, json={"$drop/keys": [rotated["name"]]}))
    r = api.delete(admin_path)
    assert r.status_code == 409 and r.json()["code"] == "conflict", r.text


def test_the_server_admin_lists_every_org(api: httpx.Client, beta: str) -> None:
    names = {o["name"] for o in every_item(api, api.get("/org"))}
    assert {ORG, beta} <= names


def test_get_org_without_view_lists_nothing(server: ServerProcess, api: httpx.Client, unique: str) -> None:
    key = service_account_with_key(api, ORG, unique)
    with server.client(key) as nobody:
        assert every_item(nobody, nobody.get("/org")) == []
