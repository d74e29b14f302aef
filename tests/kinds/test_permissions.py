"""The permission table: each kind declares its own, implications are closed, policies check it."""

from __future__ import annotations

import pytest
from _identity_support import paths, write

from plinth.kinds import KINDS, PERMISSIONS, REGISTRY, TARGET_KINDS
from plinth.kinds.base import KindSpec
from plinth.kinds.links import GVC_SCOPED_KINDS
from plinth.kinds.permissions import BASIC_IMPLIED, BASIC_PERMISSIONS, implied_closure
from plinth.kinds.policy import POLICY
from plinth.kinds.unserved import UNSERVED_TARGETS

#: docs.controlplane.com/reference/policy, "kinds with permission schemas".
API_TARGET_KINDS = {
    "workload", "secret", "gvc", "identity", "image", "org", "policy", "group", "serviceaccount", "user",
    "volumeset", "domain", "location", "ipset", "mk8s", "cloudaccount", "agent", "auditctx", "quota", "task",
}  # fmt: skip
ALL = sorted(PERMISSIONS)


def test_the_table_covers_exactly_the_targetable_kinds() -> None:
    assert set(PERMISSIONS) == TARGET_KINDS == API_TARGET_KINDS


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_served_kind_takes_its_permissions_from_the_table(kind: KindSpec) -> None:
    entry = PERMISSIONS[kind.name]
    assert kind.access.permissions is entry.permissions
    assert kind.access.implied is entry.implied


def test_the_kindspec_default_is_the_basic_set() -> None:
    bare = KindSpec(name="thing", scope="org")
    assert dict(bare.access.permissions) == dict(BASIC_PERMISSIONS) == dict(PERMISSIONS["domain"].permissions)
    assert dict(bare.access.implied) == dict(BASIC_IMPLIED) == dict(PERMISSIONS["domain"].implied)


@pytest.mark.parametrize("kind", ALL)
def test_implications_are_closed_and_manage_implies_everything(kind: str) -> None:
    permissions, implied = PERMISSIONS[kind]
    assert "manage" in permissions and "view" in permissions
    assert set(implied["manage"]) == set(permissions) - {"manage"}
    for name, targets in implied.items():
        assert name in permissions
        assert set(targets) <= set(permissions) and name not in targets
        assert list(targets) == sorted(targets)
    if "edit" in permissions:
        assert "view" in implied["edit"]
    assert implied_closure(kind, ["manage"]) == frozenset(permissions)
    assert all(description for description in permissions.values())
    assert list(permissions) == sorted(permissions)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        # docs.controlplane.com/reference/policy, confirmed.
        ("policy", {"create", "delete", "edit", "manage", "view"}),
        ("serviceaccount", {"addKey", "create", "delete", "edit", "manage", "view"}),
        ("auditctx", {"create", "edit", "manage", "readAudit", "view", "writeAudit"}),
        # The vendor's access-control runbook.
        ("secret", {"create", "delete", "edit", "manage", "reveal", "use", "view"}),
        ("identity", {"create", "delete", "edit", "manage", "use", "view"}),
        ("image", {"create", "delete", "edit", "manage", "pull", "view"}),
        ("user", {"delete", "edit", "impersonate", "invite", "manage", "view"}),
        ("gvc", {"configureLoadBalancer", "create", "delete", "edit", "manage", "view"}),
        (
            "workload",
            {
                "configureLoadBalancer", "connect", "create", "delete", "edit", "exec", "exec.runCronWorkload",
                "exec.stopReplica", "manage", "view",
            },
        ),
        (
            "org",
            {
                "edit", "exec", "exec.echo", "grafanaAdmin", "manage", "readLogs", "readMetrics", "readUsage",
                "view", "viewAccessReport",
            },
        ),
        ("mk8s", {"clusterAdmin", "create", "delete", "edit", "manage", "view"}),
        ("domain", {"create", "delete", "edit", "manage", "view"}),
    ],
)  # fmt: skip
def test_known_permission_sets(kind: str, expected: set[str]) -> None:
    assert set(PERMISSIONS[kind].permissions) == expected


@pytest.mark.parametrize(
    ("kind", "granted", "expected"),
    [
        ("image", ["create"], {"create", "pull", "view"}),
        ("image", ["pull"], {"pull", "view"}),
        ("secret", ["edit"], {"edit", "reveal", "view"}),
        ("workload", ["exec"], {"exec", "exec.runCronWorkload", "exec.stopReplica"}),
        ("org", ["exec"], {"exec", "exec.echo"}),
        ("auditctx", ["readAudit", "writeAudit"], {"readAudit", "writeAudit", "view"}),
        ("serviceaccount", ["addKey"], {"addKey"}),
        ("workload", ["connect"], {"connect"}),
        ("policy", ["view", "unknown"], {"view"}),
        ("policy", [], set()),
    ],
)
def test_implied_closure_follows_implications_transitively(kind: str, granted: list[str], expected: set[str]) -> None:
    assert implied_closure(kind, granted) == expected


def test_the_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        PERMISSIONS["secret"].permissions["steal"] = "no"  # type: ignore[index]
    with pytest.raises(TypeError):
        PERMISSIONS["gvc"] = PERMISSIONS["secret"]  # type: ignore[index]


def test_gvc_scoped_kinds_agree_with_the_registry() -> None:
    assert GVC_SCOPED_KINDS <= TARGET_KINDS
    for kind in KINDS:
        assert (kind.scope == "gvc") == (kind.name in GVC_SCOPED_KINDS), kind.name


@pytest.mark.parametrize("kind", ALL)
def test_a_policy_may_grant_every_permission_of_its_target_kind(kind: str) -> None:
    binding = {"permissions": list(PERMISSIONS[kind].permissions), "principalLinks": ["//group/devs"]}
    _, errors = write(POLICY, {"targetKind": kind, "target": "all", "bindings": [binding]}, "p1")
    assert errors == []


#: A permission name each kind does not have: a typo, or one that belongs to another kind.
FOREIGN = {
    "org": "create",
    "user": "create",
    "auditctx": "delete",
    "workload": "reveal",
    "secret": "exec",
    "serviceaccount": "invite",
    "policy": "addKey",
    "gvc": "connect",
    "image": "use",
}


@pytest.mark.parametrize("kind", ALL)
def test_a_policy_binding_naming_a_permission_its_target_kind_lacks_is_rejected(kind: str) -> None:
    foreign = FOREIGN.get(kind, "pull")
    assert foreign not in PERMISSIONS[kind].permissions
    bindings = [
        {"permissions": ["view"], "principalLinks": ["//group/devs"]},
        {"permissions": ["view", foreign, "Manage"], "principalLinks": ["//group/devs"]},
    ]
    _, errors = write(POLICY, {"targetKind": kind, "bindings": bindings}, "p1")
    assert paths(errors) == ["bindings[1].permissions[1]", "bindings[1].permissions[2]"]
    assert errors[0].message.startswith(f"'{foreign}' is not a {kind} permission")


def test_registry_kinds_are_all_targetable() -> None:
    assert set(REGISTRY) <= TARGET_KINDS


def test_a_kind_declares_its_permissions_in_one_place() -> None:
    """A served kind declares its permissions in its own module; the table of kinds not served
    yet never repeats one (it would be silently overridden)."""
    assert not set(UNSERVED_TARGETS) & set(REGISTRY)
