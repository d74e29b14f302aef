"""The authorization matrix (issue 3), through real HTTP on both backends.

Rows are (kind, verb): every served kind a service account can act on, with every verb and the
kind's actions. Columns are principals, each holding ONE permission (or none) through ONE route:

- how the grant names the principal: ``sa`` (the policy binding names the service account),
  ``grp`` (it names a group listing the service account in ``memberLinks``), ``usr`` (it names a
  group whose ``memberQuery`` matches a user, who signs in with an ID token);
- how the policy covers the item: ``link`` (``targetLinks``), ``query`` (``targetQuery`` on a
  tag) or ``all`` (``target: all``);
- what it holds: view, create, edit, delete, addKey, reveal or manage.

Locations are BYOK locations (the catalog's built-ins are listed beside them); a location has
no ``delete`` permission (docs.controlplane.com/reference/location), so its delete row needs ``manage``.

Each row runs, on every route, the principal holding exactly the permission the verb needs and
one holding a permission that does not imply it; on ``sa-all`` and ``grp-link`` every held
permission runs, which checks the implications (manage gives everything, edit gives view, and on
a secret edit also gives reveal, which gives view; nothing else implies anything). Two more
columns: ``none`` (no grant at all) and ``sa-memberquery`` (a service account carrying exactly
the tag that a ``memberQuery`` group with manage on everything matches: member queries match
users only, so it gets nothing).

The expected answer is computed here from docs.controlplane.com/reference/policy, independently of the server's table:
allowed when the route covers the item and the held permission implies the one the verb needs.
Allowed: the verb succeeds and its effect is visible. Refused: 403 naming the permission and
nothing written when the principal may view the item (or creates one), else the 404 a missing
item answers (docs/api.md, "Errors": existence is not disclosed); lists and queries omit what
the caller may not view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from plinth.kinds import REGISTRY
from tests.api.authz_support import (
    assert_forbidden,
    bearer,
    every_item,
    ok,
    service_account_with_key,
)
from tests.support.oidc_issuer import Issuer
from tests.support.server import ServerProcess

ORG = "acme"
TAG = {"authz": "granted"}  # what the query route's targetQuery matches
VS_HOME = "vs-home"  # the GVC holding the volumesets and workloads
REVEALED = "only-with-reveal"  # a secret's password: in -reveal answers, never in a plain read

PRINCIPAL_ROUTES = ("sa", "grp", "usr")
TARGET_ROUTES = ("link", "query", "all")
HELD = ("view", "create", "edit", "delete", "addKey", "reveal", "manage")

# docs.controlplane.com/reference/policy: the default set, plus addKey on serviceaccount; org has no create or delete;
# the permissions of docs.controlplane.com/reference/identity (use), .../ipset (the default set) and .../auditctx
# (readAudit, writeAudit, no delete).
BASIC = frozenset({"create", "delete", "edit", "manage", "view"})
ORG_PERMISSIONS = frozenset(
    {"edit", "manage", "view", "exec", "exec.echo", "grafanaAdmin", "readLogs", "readMetrics", "readUsage"}
    | {"viewAccessReport"}
)
PERMISSIONS = {
    "gvc": BASIC | {"configureLoadBalancer"},
    "domain": BASIC,
    "volumeset": BASIC,
    "serviceaccount": BASIC | {"addKey"},
    "group": BASIC,
    "policy": BASIC,
    "workload": BASIC | {"connect", "exec", "exec.runCronWorkload", "exec.stopReplica", "configureLoadBalancer"},
    "secret": BASIC | {"reveal", "use"},  # docs.controlplane.com/reference/secret
    "org": ORG_PERMISSIONS,
    # docs.controlplane.com/reference/location: no delete, and use (placing GVCs there); deleting needs manage.
    "location": (BASIC - {"delete"}) | {"use"},
    "identity": BASIC | {"use"},
    "ipset": BASIC,
    # Audit contexts are never deleted: no delete permission, and no delete row.
    "auditctx": (BASIC - {"delete"}) | {"readAudit", "writeAudit"},
    "cloudaccount": BASIC | {"browse"},  # docs.controlplane.com/reference/cloudaccount: edit also browse
    "agent": BASIC | {"use"},  # docs.controlplane.com/reference/agent
}
#: The permission a delete needs, where it is not ``delete``.
DELETE_NEEDS = {"location": "manage"}


def implied(kind: str, held: str) -> frozenset[str]:
    """What holding ``held`` on ``kind`` gives: manage everything, edit also view
    (docs.controlplane.com/reference/policy); on a secret edit also reveal, and reveal view
    (docs.controlplane.com/reference/secret)."""
    perms = PERMISSIONS[kind]
    if held not in perms:
        return frozenset()
    if held == "manage":
        return perms
    if held == "edit":
        return frozenset({"edit", "view", "reveal", "browse"} & perms)
    if held == "reveal":
        return frozenset({"reveal", "view"})
    return frozenset({held})


@dataclass(frozen=True)
class Column:
    """A principal: who it is and how it holds what it holds."""

    id: str
    route: str | None = None  # principal route
    target: str | None = None  # target route
    held: str | None = None

    @property
    def is_user(self) -> bool:
        return self.route == "usr"

    @property
    def account(self) -> str:
        """The service account's name (columns for users have an email instead)."""
        return f"p-{self.id}"

    @property
    def email(self) -> str:
        return f"{self.account}@authz.example.com"


COLUMNS = [Column(f"{r}-{t}-{h.lower()}", r, t, h) for r in PRINCIPAL_ROUTES for t in TARGET_ROUTES for h in HELD]
COLUMNS += [Column("none"), Column("sa-memberquery")]
MEMBER_TAG = "authz-member"  # what a user-route group's memberQuery matches
MEMBERQUERY_MIMIC = "all-manage"  # the sa-memberquery column carries the tag of this user group


@dataclass(frozen=True)
class KindUnderTest:
    kind: str
    collection: str  # list, create
    query: str | None  # -query path
    item_prefix: str  # item path = prefix + name
    link_prefix: str  # short link = prefix + name

    def name(self, base: str) -> str:
        return f"{base}.authz.example.com" if self.kind == "domain" else base

    def item(self, base: str) -> str:
        return self.item_prefix + self.name(base)

    def link(self, base: str) -> str:
        return self.link_prefix + self.name(base)

    def body(self, base: str, tags: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name(base), "tags": tags}
        if self.kind == "volumeset":
            body["spec"] = {"initialCapacity": 10}
        if self.kind == "workload":
            body["spec"] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
        if self.kind == "policy":
            body["targetKind"] = "gvc"
        if self.kind == "location":
            body["provider"] = "byok"  # as ``cpln location create`` sends it
        if self.kind == "secret":
            body |= {"type": "userpass", "data": {"username": "authz", "password": REVEALED}}
        if self.kind == "cloudaccount":
            body |= {"provider": "aws", "data": {"roleArn": "arn:aws:iam::123456789012:role/authz"}}
        return body


def _org_scoped(kind: str) -> KindUnderTest:
    return KindUnderTest(kind, f"/org/{ORG}/{kind}", f"/org/{ORG}/{kind}/-query", f"/org/{ORG}/{kind}/", f"//{kind}/")


def _gvc_scoped(kind: str) -> KindUnderTest:
    return KindUnderTest(
        kind,
        f"/org/{ORG}/gvc/{VS_HOME}/{kind}",
        f"/org/{ORG}/{kind}/-query",
        f"/org/{ORG}/gvc/{VS_HOME}/{kind}/",
        f"//gvc/{VS_HOME}/{kind}/",
    )


#: The kinds clients create (``create`` among their verbs, below the root): every one is in the
#: matrix, from the registry, so a new kind fails here until its body and expected permissions are given.
KINDS = {
    kind.name: (_gvc_scoped if kind.scope == "gvc" else _org_scoped)(kind.name)
    for kind in REGISTRY.values()
    if "create" in kind.access.verbs and kind.scope != "root"
}
TARGET = "tgt"  # covered by every target route (linked and tagged)
UNCOVERED = "off"  # neither linked nor tagged: only target: all covers it


def created_name(col: Column) -> str:
    return f"new-{col.id}"


def untagged_name(col: Column) -> str:
    return f"bare-{col.id}"


def deletable_name(col: Column) -> str:
    return f"del-{col.id}"


# -- the world: items, principals and policies, built once per module (and backend) ------------


@dataclass
class World:
    admin: httpx.Client
    tokens: dict[str, str]
    issuer: Issuer

    def headers(self, col: Column) -> dict[str, str]:
        """Service accounts present their key; users an ID token from the loopback issuer."""
        if col.is_user:
            return bearer(self.issuer.mint(col.email))
        return bearer(self.tokens[col.id])


def _policy(kind: str, target: str) -> dict[str, Any]:
    body: dict[str, Any] = {"name": f"authz-{target}-{kind}", "targetKind": kind}
    if target == "all":
        body["target"] = "all"
    elif target == "query":
        body["targetQuery"] = {"spec": {"match": "all", "terms": [{"op": "=", "tag": "authz", "value": "granted"}]}}
    elif kind == "org":
        body["targetLinks"] = [f"/org/{ORG}"]
    else:
        kut = KINDS[kind]
        cols = [c for c in COLUMNS if c.target == "link"]
        names = (created_name, untagged_name, deletable_name)
        body["targetLinks"] = [kut.link(TARGET)] + [kut.link(n(c)) for c in cols for n in names]
    bindings = []
    for held in HELD:
        if held not in PERMISSIONS[kind]:
            continue
        suffix = f"{target}-{held.lower()}"
        principals = [f"//serviceaccount/p-sa-{suffix}", f"//group/g-{suffix}", f"//group/u-{suffix}"]
        bindings.append({"permissions": [held], "principalLinks": principals})
    body["bindings"] = bindings
    return body


@pytest.fixture(scope="module")
def world(server: ServerProcess, api: httpx.Client, issuer: Issuer) -> World:
    ok(api.patch(f"/org/{ORG}", json={"tags": TAG}))
    ok(api.post(f"/org/{ORG}/gvc", json={"name": VS_HOME}), 201)
    for kut in KINDS.values():
        ok(api.post(kut.collection, json=kut.body(TARGET, TAG)), 201)
        ok(api.post(kut.collection, json=kut.body(UNCOVERED, {})), 201)
        for col in columns_for(delete_verb(kut.kind)):
            ok(api.post(kut.collection, json=kut.body(deletable_name(col), TAG)), 201)
    tokens = {}
    for col in COLUMNS:
        if col.is_user:
            # Invited, then tagged with what its group's memberQuery matches (users only).
            ok(api.post(f"/org/{ORG}/user/-invite", json={"emails": [col.email]}))
            member = {MEMBER_TAG: f"{col.target}-{str(col.held).lower()}"}
            ok(api.patch(f"/org/{ORG}/user/{col.email}", json={"tags": member}))
            continue
        tags = {MEMBER_TAG: MEMBERQUERY_MIMIC} if col.id == "sa-memberquery" else {}
        tokens[col.id] = service_account_with_key(api, ORG, col.account, tags=tags)
    for target in TARGET_ROUTES:
        for held in HELD:
            suffix = f"{target}-{held.lower()}"
            members = {"name": f"g-{suffix}", "memberLinks": [f"//serviceaccount/p-grp-{suffix}"]}
            ok(api.post(f"/org/{ORG}/group", json=members), 201)
            query = {"spec": {"terms": [{"op": "=", "tag": MEMBER_TAG, "value": suffix}]}}
            ok(api.post(f"/org/{ORG}/group", json={"name": f"u-{suffix}", "memberQuery": query}), 201)
    for kind in PERMISSIONS:
        for target in TARGET_ROUTES:
            ok(api.post(f"/org/{ORG}/policy", json=_policy(kind, target)), 201)
    return World(api, tokens, issuer)


# -- the rows ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    kind: str
    verb: str
    col: Column
    allowed: bool


Check = Callable[[World, Case, dict[str, str]], None]
VERBS: dict[str, tuple[str, Check]] = {}  # verb -> (permission it needs, check)


def verb(name: str, needs: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        VERBS[name] = (needs, fn)
        return fn

    return register


@verb("get", "view")
def _get(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    r = w.admin.get(kut.item(TARGET), headers=h)
    if case.allowed:
        assert ok(r)["name"] == kut.name(TARGET)
        assert REVEALED not in r.text
    else:
        assert_refused(case, r, "view", kut.name(TARGET))


@verb("reveal", "reveal")
def _reveal(w: World, case: Case, h: dict[str, str]) -> None:
    r = w.admin.get(f"{KINDS['secret'].item(TARGET)}/-reveal", headers=h)
    if case.allowed:
        assert ok(r)["data"]["password"] == REVEALED
    else:
        assert_refused(case, r, "reveal", TARGET)
        assert REVEALED not in r.text


@verb("get-uncovered", "view")
def _get_uncovered(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    r = w.admin.get(kut.item(UNCOVERED), headers=h)
    if case.allowed:
        assert ok(r)["name"] == kut.name(UNCOVERED)
    else:
        assert_refused(case, r, "view", kut.name(UNCOVERED))


def _check_listed(kut: KindUnderTest, case: Case, names: set[str]) -> None:
    if not case.allowed:
        assert names == set(), f"a principal without view was shown {sorted(names)}"
        return
    assert kut.name(TARGET) in names
    assert (kut.name(UNCOVERED) in names) == (case.col.target == "all")


@verb("list", "view")
def _list(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    names = {i["name"] for i in every_item(w.admin, w.admin.get(kut.collection, headers=h), h)}
    _check_listed(kut, case, names)


@verb("query", "view")
def _query(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    assert kut.query is not None
    names_in = [kut.name(TARGET), kut.name(UNCOVERED)]
    body = {"kind": case.kind, "spec": {"match": "any", "terms": [{"property": "name", "value": n} for n in names_in]}}
    first = w.admin.post(kut.query, json=body, headers=h)
    _check_listed(kut, case, {i["name"] for i in every_item(w.admin, first, h)})


def _check_create(w: World, case: Case, h: dict[str, str], name: str, tags: dict[str, str]) -> None:
    """POST as the case's principal: created where ``Location`` says, or 403 and nothing stored."""
    kut = KINDS[case.kind]
    r = w.admin.post(kut.collection, json=kut.body(name, tags), headers=h)
    if case.allowed:
        assert ok(r, 201)["name"] == kut.name(name)
        assert r.headers["location"] == kut.item(name)
        assert ok(w.admin.get(kut.item(name)))["name"] == kut.name(name)
    else:
        assert_forbidden(r, "create")
        assert w.admin.get(kut.item(name)).status_code == 404


@verb("create", "create")
def _create(w: World, case: Case, h: dict[str, str]) -> None:
    _check_create(w, case, h, created_name(case.col), TAG)


@verb("create-untagged", "create")
def _create_untagged(w: World, case: Case, h: dict[str, str]) -> None:
    """Without the tag a targetQuery matches, the query route does not cover the new item."""
    _check_create(w, case, h, untagged_name(case.col), {})


@verb("patch", "edit")
def _patch(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    description = f"patched by {case.col.id}"
    r = w.admin.patch(kut.item(TARGET), json={"description": description}, headers=h)
    if case.allowed:
        assert ok(r)["description"] == description
        assert ok(w.admin.get(kut.item(TARGET)))["description"] == description
    else:
        assert_refused(case, r, "edit", kut.name(TARGET))
        assert ok(w.admin.get(kut.item(TARGET)))["description"] != description


def delete_verb(kind: str) -> str:
    """The row that deletes items of ``kind``: ``delete``, or ``delete-manage`` (location)."""
    return "delete-manage" if DELETE_NEEDS.get(kind) == "manage" else "delete"


def _check_delete(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    path = kut.item(deletable_name(case.col))
    r = w.admin.delete(path, headers=h)
    if case.allowed:
        assert r.status_code == 202, r.text
        assert w.admin.get(path).status_code == 404
    else:
        assert_refused(case, r, VERBS[case.verb][0], kut.name(deletable_name(case.col)))
        assert ok(w.admin.get(path))["name"] == kut.name(deletable_name(case.col))


verb("delete", "delete")(_check_delete)
verb("delete-manage", "manage")(_check_delete)


@verb("addKey", "addKey")
def _add_key(w: World, case: Case, h: dict[str, str]) -> None:
    path = KINDS["serviceaccount"].item(TARGET)
    description = f"added by {case.col.id}"
    r = w.admin.post(f"{path}/-addKey", json={"description": description}, headers=h)
    described = [k for k in ok(w.admin.get(path))["keys"] if k["description"] == description]
    if case.allowed:
        minted = ok(r, 201)
        assert minted["description"] == description and minted["key"]
        assert [k["name"] for k in described] == [minted["name"]]
    else:
        assert_refused(case, r, "addKey", TARGET)
        assert described == []


@verb("eventlog", "view")
def _eventlog(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    r = w.admin.get(f"{kut.item(TARGET)}/-eventlog", headers=h)
    if case.allowed:
        events = ok(r)["items"]
        assert events and events[0]["context"]["link"] == kut.item(TARGET)
    else:
        assert_refused(case, r, "view", kut.name(TARGET))


@verb("accessreport", "view")
def _accessreport(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    r = w.admin.get(f"{kut.item(TARGET)}/-accessreport", headers=h)
    if case.allowed:
        assert ok(r)["kind"] == "accessreport"
    else:
        assert_refused(case, r, "view", kut.name(TARGET))


@verb("deployments", "view")
def _deployments(w: World, case: Case, h: dict[str, str]) -> None:
    kut = KINDS[case.kind]
    r = w.admin.get(f"{kut.item(TARGET)}/deployment", headers=h)
    if case.allowed:
        assert ok(r)["kind"] == "list"
    else:
        assert_refused(case, r, "view", kut.name(TARGET))


# The org: one item, no create or delete (server admin only / never), no -query.
ORG_PATH = f"/org/{ORG}"


@verb("org-get", "view")
def _org_get(w: World, case: Case, h: dict[str, str]) -> None:
    r = w.admin.get(ORG_PATH, headers=h)
    if case.allowed:
        assert ok(r)["name"] == ORG
    else:
        assert_refused(case, r, "view", ORG)


@verb("org-list", "view")
def _org_list(w: World, case: Case, h: dict[str, str]) -> None:
    r = w.admin.get("/org", headers=h)
    if case.col.is_user:
        # An ID token signs in to the org its path names; /org names none (docs/api.md, users).
        assert r.status_code == 401, r.text
        return
    names = [i["name"] for i in every_item(w.admin, r, h)]
    assert names == ([ORG] if case.allowed else [])


@verb("org-patch", "edit")
def _org_patch(w: World, case: Case, h: dict[str, str]) -> None:
    description = f"patched by {case.col.id}"
    r = w.admin.patch(ORG_PATH, json={"description": description}, headers=h)
    if case.allowed:
        assert ok(r)["description"] == description
    else:
        assert_refused(case, r, "edit", ORG)
        assert ok(w.admin.get(ORG_PATH))["description"] != description


@verb("org-eventlog", "view")
def _org_eventlog(w: World, case: Case, h: dict[str, str]) -> None:
    r = w.admin.get(f"{ORG_PATH}/-eventlog", headers=h)
    if case.allowed:
        assert ok(r)["items"][0]["context"]["link"] == ORG_PATH
    else:
        assert_refused(case, r, "view", ORG)


@verb("org-accessreport", "view")
def _org_accessreport(w: World, case: Case, h: dict[str, str]) -> None:
    r = w.admin.get(f"{ORG_PATH}/-accessreport", headers=h)
    if case.allowed:
        assert ok(r)["kind"] == "accessreport"
    else:
        assert_refused(case, r, "view", ORG)


ITEM_VERBS = (
    "get",
    "get-uncovered",
    "list",
    "query",
    "create",
    "create-untagged",
    "patch",
    "delete",
    "eventlog",
    "accessreport",
)
ROWS = [
    (k, delete_verb(k) if v == "delete" else v)
    for k in KINDS
    for v in ITEM_VERBS
    # Audit contexts are never deleted: no delete permission, and no delete row.
    if v != "delete" or "delete" in REGISTRY[k].access.verbs
]
ROWS.insert(ROWS.index(("serviceaccount", "delete")) + 1, ("serviceaccount", "addKey"))
ROWS.append(("workload", "deployments"))
ROWS.append(("secret", "reveal"))
ROWS += [("org", v) for v in ("org-get", "org-list", "org-patch", "org-eventlog", "org-accessreport")]


#: For each permission a verb needs, a permission that does not imply it (the "without" column).
WITHOUT = {
    "view": "delete",
    "create": "edit",
    "edit": "view",
    "delete": "edit",
    "addKey": "edit",
    "manage": "edit",
    "reveal": "view",
}
#: The routes on which every held permission runs (the implications).
EVERY_HELD_ON = {("sa", "all"), ("grp", "link")}


def columns_for(verb_name: str) -> list[Column]:
    needs = VERBS[verb_name][0]
    return [
        c
        for c in COLUMNS
        if c.held is None or c.held in (needs, WITHOUT[needs]) or (c.route, c.target) in EVERY_HELD_ON
    ]


def covers(target: str | None, verb_name: str) -> bool:
    """Whether a policy of this target route covers the item the verb acts on."""
    if verb_name == "get-uncovered":
        return target == "all"
    if verb_name == "create-untagged":
        return target != "query"
    return True


def expected(kind: str, verb_name: str, col: Column) -> bool:
    if col.held is None:  # none, sa-memberquery: nothing reaches them
        return False
    return covers(col.target, verb_name) and VERBS[verb_name][0] in implied(kind, col.held)


def may_view(case: Case) -> bool:
    """Whether the case's principal may view the item its verb acts on."""
    col = case.col
    if col.held is None:
        return False
    return covers(col.target, case.verb) and "view" in implied(case.kind, col.held)


def assert_refused(case: Case, response: httpx.Response, permission: str, name: str) -> None:
    """403 naming ``permission`` for a principal that may view the item; else the same 404 a
    missing item answers, so a refusal does not tell that the item exists."""
    if may_view(case):
        assert_forbidden(response, permission)
        return
    assert response.status_code == 404, f"{response.request.method} {response.request.url}: {response.text}"
    body = response.json()
    assert body["status"] == 404 and body["details"] == {"kind": case.kind, "name": name}, body


def _cases() -> list[Any]:
    out = []
    for kind, verb_name in ROWS:
        for col in columns_for(verb_name):
            allowed = expected(kind, verb_name, col)
            case = Case(kind, verb_name, col, allowed)
            case_id = f"{kind}.{verb_name.removeprefix('org-')}.{col.id}.{'allowed' if allowed else 'refused'}"
            out.append(pytest.param(case, id=case_id))
    return out


@pytest.mark.parametrize("case", _cases())
def test_matrix(world: World, case: Case) -> None:
    VERBS[case.verb][1](world, case, world.headers(case.col))


def test_the_matrix_has_both_answers_for_every_row() -> None:
    """Guards the table itself: on every route each row has a principal allowed (where the route
    covers the item) and one refused, and the implications run on both principal routes."""
    for kind, verb_name in ROWS:
        cols = columns_for(verb_name)
        answers = {(c.route, c.target, expected(kind, verb_name, c)) for c in cols if c.held}
        for route in PRINCIPAL_ROUTES:
            for target in TARGET_ROUTES:
                assert (route, target, False) in answers, (kind, verb_name, route, target)
                if covers(target, verb_name):
                    assert (route, target, True) in answers, (kind, verb_name, route, target)
        assert {c.held for c in cols if (c.route, c.target) == ("sa", "all")} == set(HELD)
        assert {c.held for c in cols if (c.route, c.target) == ("grp", "link")} == set(HELD)
        assert {"none", "sa-memberquery"} <= {c.id for c in cols}


def test_every_kind_in_the_matrix_has_its_expected_permissions() -> None:
    """The expectations above are written from the documentation, not read from the kinds: a
    kind the registry adds to the matrix needs its own entry in ``PERMISSIONS``."""
    assert set(PERMISSIONS) == set(KINDS) | {"org"}
