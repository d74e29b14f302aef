"""The group kind through build_candidate: member links and query, identity matcher, origin."""

from __future__ import annotations

from typing import Any

import pytest
from _identity_support import CTX, ORG, SERVER_ENVELOPE, paths, stored, write

from plinth.kinds import REGISTRY
from plinth.kinds.group import GROUP

QUERY = {"fetch": "items", "spec": {"match": "all", "terms": [{"op": "=", "tag": "team", "value": "core"}]}}
MAXIMAL: dict[str, Any] = {
    "kind": "group",
    "description": "Core team",
    "tags": {"team": "core"},
    "memberLinks": ["//user/ada@example.com", f"/org/{ORG}/serviceaccount/ci"],
    "memberQuery": {"kind": "user", **QUERY},
    "identityMatcher": {"expression": "groups[?@ == 'core']", "language": "jmespath"},
}


def test_minimal_group() -> None:
    item, errors = write(GROUP, {}, "core")
    assert errors == []
    assert item == {"kind": "group", "name": "core", "description": "core", "tags": {}, "origin": "default"}


def test_maximal_group_is_stored_as_sent() -> None:
    item, errors = write(GROUP, MAXIMAL, "core")
    assert errors == []
    assert item == {"name": "core", **MAXIMAL, "origin": "default"}


@pytest.mark.parametrize(("count", "ok"), [(0, True), (1, True), (200, True), (201, False)])
def test_member_links_bound(count: int, ok: bool) -> None:
    links = [f"//user/u{i}@example.com" for i in range(count)]
    item, errors = write(GROUP, {"memberLinks": links}, "core")
    assert paths(errors) == ([] if ok else ["memberLinks"])
    if ok:
        assert item["memberLinks"] == links


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        ([""], ["memberLinks[0]"]),
        ([7], ["memberLinks[0]"]),
        ("//user/a@b.co", ["memberLinks"]),
        (["//user/ada"], ["memberLinks[0]"]),
        (["//user/ada@example.com", "//gvc/prod/user/bob@example.com"], ["memberLinks[1]"]),
        (["//gvc/prod/serviceaccount/ci"], ["memberLinks[0]"]),
    ],
)
def test_member_link_shapes(links: Any, expected: list[str]) -> None:
    assert paths(write(GROUP, {"memberLinks": links}, "core")[1]) == expected


def test_user_links_must_name_an_email_and_say_which_link() -> None:
    _, errors = write(GROUP, {"memberLinks": ["//serviceaccount/ci", "//user/ada"]}, "core")
    assert paths(errors) == ["memberLinks[1]"]
    assert errors[0].message.startswith("'//user/ada' must name the user by email address")


def test_member_emails_are_lowercased_and_each_member_kept_once() -> None:
    links = [
        "//user/Ada@Example.com",
        f"/org/{ORG}/user/ada@example.com",
        "//serviceaccount/ci",
        f"/org/{ORG}/serviceaccount/ci",
        "//user/bob@example.com",
    ]
    item, errors = write(GROUP, {"memberLinks": links}, "core")
    assert errors == []
    assert item["memberLinks"] == ["//user/ada@example.com", "//serviceaccount/ci", "//user/bob@example.com"]


def test_links_to_other_kinds_or_orgs_are_left_to_the_engine_reference_check() -> None:
    links = ["//group/admins", "/org/other/user/ada@example.com", "not-a-link"]
    item, errors = write(GROUP, {"memberLinks": links}, "core")
    assert errors == []
    refs = GROUP.rules.references(item, ORG)
    assert [(r.path, r.link) for r in refs] == [(f"memberLinks[{i}]", link) for i, link in enumerate(links)]
    assert {r.kinds for r in refs} == {frozenset({"user", "serviceaccount"})}


def test_references_need_not_exist_so_cpln_apply_may_write_groups_before_members() -> None:
    item = stored(GROUP, MAXIMAL, "core")
    refs = GROUP.rules.references(item, ORG)
    assert [(r.path, r.link, r.must_exist) for r in refs] == [
        ("memberLinks[0]", "//user/ada@example.com", False),
        ("memberLinks[1]", f"/org/{ORG}/serviceaccount/ci", False),
    ]
    assert GROUP.rules.references(stored(GROUP, {}, "empty"), ORG) == []


@pytest.mark.parametrize(
    ("query", "expected_kind", "expected"),
    [
        (QUERY, "user", []),
        ({}, "user", []),
        ({"kind": "user"}, "user", []),
        ({"kind": "serviceaccount"}, None, ["memberQuery.kind"]),
        ({"spec": {"terms": [{"tag": "a", "property": "name", "value": "x"}]}}, None, ["memberQuery.spec.terms[0]"]),
        ({"spec": {"match": "some"}}, None, ["memberQuery.spec.match"]),
        ({"fetch": "everything"}, None, ["memberQuery.fetch"]),
        ({"where": 1}, None, ["memberQuery.where"]),
        ("kind=user", None, ["memberQuery"]),
    ],
)
def test_member_query(query: Any, expected_kind: str | None, expected: list[str]) -> None:
    item, errors = write(GROUP, {"memberQuery": query}, "core")
    assert paths(errors) == expected
    if expected_kind is not None:
        assert item["memberQuery"]["kind"] == expected_kind
        assert next(iter(item["memberQuery"])) == "kind"


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        ({"expression": "x", "language": "jmespath"}, []),
        ({"expression": "x" * 4096, "language": "javascript"}, []),
        ({"expression": "", "language": "jmespath"}, ["identityMatcher.expression"]),
        ({"expression": "x" * 4097, "language": "jmespath"}, ["identityMatcher.expression"]),
        ({"expression": "x", "language": "python"}, ["identityMatcher.language"]),
        ({"language": "jmespath"}, ["identityMatcher.expression"]),
        ({"expression": "x"}, ["identityMatcher.language"]),
        ({"expression": "x", "language": "jmespath", "flags": "i"}, ["identityMatcher.flags"]),
        ({"expression": 1, "language": "jmespath"}, ["identityMatcher.expression"]),
    ],
)
def test_identity_matcher(matcher: dict[str, Any], expected: list[str]) -> None:
    assert paths(write(GROUP, {"identityMatcher": matcher}, "core")[1]) == expected


def test_clients_never_set_origin_and_updates_keep_it() -> None:
    item, errors = write(GROUP, {"origin": "builtin"}, "core")
    assert errors == [] and item["origin"] == "default"
    old = {**stored(GROUP, {"memberLinks": ["//user/ada@example.com"]}, "viewers"), "origin": "builtin"}
    item, errors = write(GROUP, {"origin": "default", "memberLinks": []}, "viewers", old)
    assert errors == [] and item["origin"] == "builtin"


@pytest.mark.parametrize(
    ("name", "origin", "links", "ok"),
    [
        ("superusers", "builtin", [], False),
        ("superusers", "builtin", None, False),
        ("superusers", "builtin", ["//serviceaccount/admin"], True),
        ("superusers", "default", [], True),
        ("viewers", "builtin", [], True),
    ],
)
def test_builtin_superusers_keeps_a_member(name: str, origin: str, links: list[str] | None, ok: bool) -> None:
    old = {**stored(GROUP, {"memberLinks": ["//serviceaccount/admin"]}, name), "origin": origin}
    body = {} if links is None else {"memberLinks": links}
    _, errors = write(GROUP, body, name, old)
    assert paths(errors) == ([] if ok else ["memberLinks"])


def test_server_owned_envelope_is_ignored() -> None:
    item, errors = write(GROUP, {**SERVER_ENVELOPE, "memberLinks": []}, "core")
    assert errors == []
    assert not set(SERVER_ENVELOPE) & set(item)


def test_unknown_fields_are_reported_once() -> None:
    _, errors = write(GROUP, {"members": [], "identityMatchers": {}}, "core")
    assert paths(errors) == ["members", "identityMatchers"]


def test_several_errors_at_once_with_their_paths() -> None:
    body = {
        "memberLinks": ["//user/a@b.co"] * 201,
        "memberQuery": {"fetch": "all"},
        "identityMatcher": {"expression": "", "language": "lua"},
        "spec": {"x": 1},
        "owner": "me",
    }
    _, errors = write(GROUP, body, "Core")
    assert paths(errors) == [
        "owner",
        "name",
        "memberLinks",
        "memberQuery.fetch",
        "identityMatcher.expression",
        "identityMatcher.language",
        "spec",
    ]


def test_status_is_empty() -> None:
    assert GROUP.status.compute(stored(GROUP, MAXIMAL, "core"), CTX) == {}


def test_declaration() -> None:
    assert REGISTRY["group"] is GROUP
    assert (GROUP.scope, GROUP.presentation.title, GROUP.schema.server_fields) == (
        "org",
        "Group",
        frozenset({"origin"}),
    )
    assert GROUP.schema.droppable_server_lists == frozenset()
    assert "origin" in GROUP.presentation.query_properties
    assert set(GROUP.access.permissions) == {"create", "delete", "edit", "manage", "view"}
