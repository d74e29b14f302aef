"""The policy kind through build_candidate: target kind and modes, bindings, principals, origin."""

from __future__ import annotations

from typing import Any

import pytest
from _identity_support import CTX, ORG, SERVER_ENVELOPE, paths, stored, write

from plinth.kinds import REGISTRY, TARGET_KINDS
from plinth.kinds.policy import POLICY

ADA = "//user/ada@example.com"
USERS = [f"//user/u{i}@example.com" for i in range(201)]
BINDING: dict[str, Any] = {"permissions": ["view"], "principalLinks": [ADA]}
MAXIMAL: dict[str, Any] = {
    "kind": "policy",
    "description": "Deployers",
    "tags": {"team": "core"},
    "targetKind": "workload",
    "targetLinks": ["//gvc/prod/workload/web", f"/org/{ORG}/gvc/prod/workload/api"],
    "bindings": [
        {"permissions": ["exec", "view"], "principalLinks": ["//group/devs", "//serviceaccount/ci"]},
        {"permissions": ["manage"], "principalLinks": [ADA, "//gvc/prod/identity/deployer"]},
    ],
}


def policy(**fields: Any) -> dict[str, Any]:
    return {"targetKind": "secret", **fields}


def errors_for(body: dict[str, Any]) -> list[str]:
    return paths(write(POLICY, body, "deployers")[1])


def test_minimal_policy_targets_nothing_and_grants_nothing() -> None:
    item, errors = write(POLICY, {"targetKind": "secret"}, "empty")
    assert errors == []
    assert item == {
        "kind": "policy",
        "name": "empty",
        "description": "empty",
        "tags": {},
        "targetKind": "secret",
        "origin": "default",
    }


def test_maximal_policy_is_stored_as_sent() -> None:
    item, errors = write(POLICY, MAXIMAL, "deployers")
    assert errors == []
    assert item == {"name": "deployers", **MAXIMAL, "origin": "default"}


@pytest.mark.parametrize("kind", sorted(TARGET_KINDS))
def test_every_targetable_kind_is_accepted(kind: str) -> None:
    item, errors = write(POLICY, {"targetKind": kind, "target": "all", "bindings": [BINDING]}, "all-of-it")
    assert errors == [] and item["targetKind"] == kind


@pytest.mark.parametrize("kind", [None, "", "account", "Workload", "event", 1, ["gvc"]])
def test_target_kind_is_required_and_known(kind: Any) -> None:
    body = {} if kind is None else {"targetKind": kind}
    assert errors_for(body) == ["targetKind"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"target": "all"}, []),
        ({"target": "all", "targetLinks": []}, []),
        ({"targetLinks": ["//secret/a"]}, []),
        ({"targetQuery": {}}, []),
        ({"targetLinks": [], "targetQuery": {}}, []),
        ({"target": "all", "targetLinks": ["//secret/a"]}, ["targetLinks"]),
        ({"target": "all", "targetQuery": {}}, ["targetQuery"]),
        ({"targetLinks": ["//secret/a"], "targetQuery": {}}, ["targetQuery"]),
        ({"target": "all", "targetLinks": ["//secret/a"], "targetQuery": {}}, ["targetLinks", "targetQuery"]),
        ({"target": "some"}, ["target"]),
        ({"target": True}, ["target"]),
    ],
)
def test_one_target_mode(fields: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(policy(**fields)) == expected


@pytest.mark.parametrize(("count", "ok"), [(0, True), (1, True), (200, True), (201, False)])
def test_target_links_bound(count: int, ok: bool) -> None:
    assert errors_for(policy(targetLinks=[f"//secret/s{i}" for i in range(count)])) == ([] if ok else ["targetLinks"])


@pytest.mark.parametrize(
    ("kind", "link", "ok"),
    [
        ("workload", "//gvc/prod/workload/web", True),
        ("workload", "//workload/web", False),
        ("volumeset", "//gvc/prod/volumeset/data", True),
        ("volumeset", "//volumeset/data", False),
        ("identity", "//identity/x", False),
        ("secret", "//gvc/prod/secret/a", False),
        ("gvc", "//gvc/prod", True),
        ("org", f"/org/{ORG}", True),
        ("user", "//user/ada@example.com", True),
        ("user", "//user/ada", False),
    ],
)
def test_target_link_shapes(kind: str, link: str, ok: bool) -> None:
    _, errors = write(POLICY, {"targetKind": kind, "targetLinks": [link]}, "p1")
    assert paths(errors) == ([] if ok else ["targetLinks[0]"])
    if not ok:
        assert f"'{link}'" in errors[0].message


def test_target_links_are_kept_once_and_user_emails_lowercased() -> None:
    links = ["//user/Ada@Example.com", f"/org/{ORG}/user/ada@example.com", "//user/bob@example.com"]
    item = stored(POLICY, {"targetKind": "user", "targetLinks": links}, "p1")
    assert item["targetLinks"] == ["//user/ada@example.com", "//user/bob@example.com"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, []),
        ({"kind": "secret"}, []),
        ({"kind": "workload"}, ["targetQuery.kind"]),
        ({"spec": {"terms": [{"op": "exists", "tag": "a", "value": 1}]}}, ["targetQuery.spec.terms[0]"]),
        ({"spec": {"sort": {"order": "asc"}}}, ["targetQuery.spec.sort.by"]),
        ({"limit": 5}, ["targetQuery.limit"]),
    ],
)
def test_target_query(query: dict[str, Any], expected: list[str]) -> None:
    item, errors = write(POLICY, policy(targetQuery=query), "p1")
    assert paths(errors) == expected
    if not expected:
        assert item["targetQuery"] == {"kind": "secret", **query}


@pytest.mark.parametrize(("count", "ok"), [(0, True), (1, True), (50, True), (51, False)])
def test_bindings_bound(count: int, ok: bool) -> None:
    assert errors_for(policy(bindings=[BINDING] * count)) == ([] if ok else ["bindings"])


@pytest.mark.parametrize(
    ("binding", "expected"),
    [
        ({"permissions": [], "principalLinks": [ADA]}, ["bindings[0].permissions"]),
        ({"permissions": [""], "principalLinks": [ADA]}, ["bindings[0].permissions[0]"]),
        ({"permissions": "view", "principalLinks": [ADA]}, ["bindings[0].permissions"]),
        ({"principalLinks": [ADA]}, ["bindings[0].permissions"]),
        ({"permissions": ["view"], "principalLinks": []}, ["bindings[0].principalLinks"]),
        ({"permissions": ["view"]}, ["bindings[0].principalLinks"]),
        ({"permissions": ["view"], "principalLinks": [ADA], "effect": "deny"}, ["bindings[0].effect"]),
        ({"permissions": ["view"], "principalLinks": [f"//user/u{i}@x.io" for i in range(200)]}, []),
        (
            {"permissions": ["view"], "principalLinks": [f"//user/u{i}@x.io" for i in range(201)]},
            ["bindings[0].principalLinks"],
        ),
    ],
)
def test_binding_shapes(binding: dict[str, Any], expected: list[str]) -> None:
    assert errors_for(policy(bindings=[binding])) == expected


def test_binding_permissions_are_those_of_the_target_kind() -> None:
    bindings = [BINDING, {"permissions": ["reveal", "exec", "use", "pull"], "principalLinks": [ADA]}]
    _, errors = write(POLICY, policy(bindings=bindings), "p1")
    assert paths(errors) == ["bindings[1].permissions[1]", "bindings[1].permissions[3]"]
    assert errors[0].message.startswith("'exec' is not a secret permission; use create, delete, edit")


@pytest.mark.parametrize(
    ("link", "ok"),
    [
        (ADA, True),
        (f"/org/{ORG}/user/ada@example.com", True),
        ("//serviceaccount/ci", True),
        ("//group/devs", True),
        ("//gvc/prod/identity/app", True),
        ("//identity/app", False),
        ("//user/ada", False),
        ("//gvc/prod/group/devs", False),
    ],
)
def test_principal_link_shapes(link: str, ok: bool) -> None:
    _, errors = write(POLICY, policy(bindings=[{"permissions": ["view"], "principalLinks": [link]}]), "p1")
    assert paths(errors) == ([] if ok else ["bindings[0].principalLinks[0]"])


def test_permissions_and_principals_are_kept_once_per_binding() -> None:
    binding = {
        "permissions": ["view", "reveal", "view"],
        "principalLinks": ["//user/Ada@Example.com", ADA, "//group/devs", f"/org/{ORG}/group/devs"],
    }
    item = stored(POLICY, policy(bindings=[binding, binding]), "p1")
    assert item["bindings"] == [{"permissions": ["view", "reveal"], "principalLinks": [ADA, "//group/devs"]}] * 2


def test_references_need_not_exist_so_cpln_apply_may_write_policies_before_principals() -> None:
    item = stored(POLICY, MAXIMAL, "deployers")
    refs = [(r.path, r.link, tuple(sorted(r.kinds or ())), r.must_exist) for r in POLICY.rules.references(item, ORG)]
    principals = ("group", "identity", "serviceaccount", "user")
    assert refs == [
        ("targetLinks[0]", "//gvc/prod/workload/web", ("workload",), False),
        ("targetLinks[1]", f"/org/{ORG}/gvc/prod/workload/api", ("workload",), False),
        ("bindings[0].principalLinks[0]", "//group/devs", principals, False),
        ("bindings[0].principalLinks[1]", "//serviceaccount/ci", principals, False),
        ("bindings[1].principalLinks[0]", ADA, principals, False),
        ("bindings[1].principalLinks[1]", "//gvc/prod/identity/deployer", principals, False),
    ]
    assert POLICY.rules.references(stored(POLICY, policy(), "p1"), ORG) == []


def test_links_to_other_kinds_or_orgs_are_left_to_the_engine_reference_check() -> None:
    body = policy(
        targetLinks=["//workload/x", "/org/other/secret/a"], bindings=[{**BINDING, "principalLinks": ["//domain/x"]}]
    )
    item, errors = write(POLICY, body, "p1")
    assert errors == []
    assert [r.path for r in POLICY.rules.references(item, ORG)] == [
        "targetLinks[0]",
        "targetLinks[1]",
        "bindings[0].principalLinks[0]",
    ]


def test_clients_never_set_origin_and_updates_keep_it() -> None:
    item, errors = write(POLICY, policy(origin="builtin"), "p1")
    assert errors == [] and item["origin"] == "default"
    old = {**stored(POLICY, policy(target="all"), "superusers-secret"), "origin": "builtin"}
    item, errors = write(POLICY, policy(target="all", origin="default"), "superusers-secret", old)
    assert errors == [] and item["origin"] == "builtin"


def test_server_owned_envelope_is_ignored() -> None:
    item, errors = write(POLICY, {**SERVER_ENVELOPE, **policy()}, "p1")
    assert errors == []
    assert not set(SERVER_ENVELOPE) & set(item)


def test_unknown_fields_and_a_spec_are_rejected_each_once() -> None:
    assert errors_for(policy(targetkind="gvc", spec={"a": 1})) == ["targetkind", "spec"]


def test_several_errors_at_once_with_their_paths() -> None:
    body = {
        "targetKind": "gvc",
        "target": "all",
        "targetLinks": ["//gvc/prod"],
        "targetQuery": {"kind": "workload"},
        "bindings": [
            {"permissions": ["view", "reveal"], "principalLinks": ["//identity/x"]},
            {"permissions": ["configureLoadBalancer"], "principalLinks": ["//user/nobody"]},
        ],
    }
    _, errors = write(POLICY, body, "gvc-admins")
    assert paths(errors) == [
        "targetLinks",
        "targetQuery",
        "targetQuery.kind",
        "bindings[0].permissions[1]",
        "bindings[0].principalLinks[0]",
        "bindings[1].principalLinks[0]",
    ]


def test_status_is_empty() -> None:
    assert POLICY.status.compute(stored(POLICY, MAXIMAL, "deployers"), CTX) == {}


def test_declaration() -> None:
    assert REGISTRY["policy"] is POLICY
    assert (POLICY.scope, POLICY.presentation.title, POLICY.schema.server_fields) == (
        "org",
        "Policy",
        frozenset({"origin"}),
    )
    assert {"origin", "targetKind"} <= set(POLICY.presentation.query_properties)
    # docs.controlplane.com/reference/policy, confirmed table.
    assert set(POLICY.access.permissions) == {"create", "delete", "edit", "manage", "view"}
    assert dict(POLICY.access.implied) == {"edit": ("view",), "manage": ("create", "delete", "edit", "view")}
