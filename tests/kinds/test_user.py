"""The user kind through build_candidate: the email is the name, no description, idp bounds."""

from __future__ import annotations

from typing import Any

import pytest
from _identity_support import CTX, SERVER_ENVELOPE, paths, stored, write

from plinth.kinds import REGISTRY
from plinth.kinds.user import USER

ADA = "ada@example.com"


#: The longest user name: 64 characters before the "@", 254 in all.
LONGEST = "a" * 64 + "@" + "b" * 63 + "." + "c" * 63 + "." + "d" * 58 + ".io"


def test_longest_helper_is_254_characters() -> None:
    assert len(LONGEST) == 254


def test_minimal_user_is_its_email_and_nothing_else() -> None:
    item, errors = write(USER, {"email": ADA}, ADA)
    assert errors == []
    assert item == {"kind": "user", "name": ADA, "tags": {}, "email": ADA}


def test_maximal_user_is_stored_as_sent() -> None:
    body = {"kind": "user", "email": ADA, "idp": "google.com", "tags": {"team": "core", "level": 3, "on": True}}
    item, errors = write(USER, body, ADA)
    assert errors == []
    assert item == {"name": ADA, **body}


@pytest.mark.parametrize(
    "name",
    [
        ADA,
        "a.b+tag@sub.example.co",
        "_x@ex.io",
        "o'neil@example.com",
        "x-y_z@a-b.example.museum",
        "1@2.io",
        "a" * 64 + "@example.com",
        LONGEST,
    ],
)
def test_user_names_that_are_lowercase_emails(name: str) -> None:
    assert write(USER, {"email": name}, name)[1] == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Ada@example.com", "must be in lowercase"),
        ("ada@EXAMPLE.com", "must be in lowercase"),
        ("ada", "email address"),
        ("ada@example", "email address"),
        ("-ada@example.com", "email address"),
        ("ada@-example.com", "email address"),
        ("ada@example-.com", "email address"),
        ("ada@example..com", "email address"),
        ("a/b@example.com", "email address"),
        ("a%40b@example.com", "email address"),
        ("ada@@example.com", "email address"),
        ("ada @example.com", "email address"),
        ("a" * 65 + "@example.com", "at most 64 characters before '@'"),
        ("a" + LONGEST, "at most 254 characters"),
        ("ab", "email address"),
    ],
)
def test_user_names_that_are_not(name: str, message: str) -> None:
    _, errors = write(USER, {"email": name}, name)
    assert paths(errors) == ["name", "email"]
    assert all(message in error.message for error in errors)


def test_the_email_must_be_the_name() -> None:
    _, errors = write(USER, {"email": "grace@example.com"}, ADA)
    assert paths(errors) == ["email"]
    assert errors[0].message == f"must be the user's name, '{ADA}'"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, ["email"]),
        ({"email": None}, ["email"]),
        ({"email": 7}, ["email"]),
        ({"email": ADA, "idp": ""}, ["idp"]),
        ({"email": ADA, "idp": "x" * 251}, ["idp"]),
        ({"email": ADA, "idp": 1}, ["idp"]),
    ],
)
def test_field_shapes(body: dict[str, Any], expected: list[str]) -> None:
    assert paths(write(USER, body, ADA)[1]) == expected


@pytest.mark.parametrize("idp", ["x", "x" * 250, "saml.okta"])
def test_idp_bounds_accepted(idp: str) -> None:
    assert write(USER, {"email": ADA, "idp": idp}, ADA)[0]["idp"] == idp


def test_users_have_no_description_no_spec_and_no_origin() -> None:
    body = {"email": ADA, "description": "Ada", "spec": {"x": 1}, "origin": "builtin", "color": "red"}
    _, errors = write(USER, body, ADA)
    assert sorted(paths(errors)) == ["color", "description", "origin", "spec"]
    assert {e.message for e in errors if e.path != "spec"} == {"unknown field"}


def test_an_empty_spec_is_not_an_error() -> None:
    assert write(USER, {"email": ADA, "spec": {}}, ADA)[1] == []


def test_server_owned_envelope_is_ignored() -> None:
    item, errors = write(USER, {**SERVER_ENVELOPE, "email": ADA}, ADA)
    assert errors == []
    assert not set(SERVER_ENVELOPE) & set(item)


def test_several_errors_at_once_with_their_paths() -> None:
    body = {"email": "Ada@x", "idp": "", "tags": {"cpln/owner": "me"}, "description": "d"}
    _, errors = write(USER, body, "Ada")
    assert paths(errors) == ["description", "name", "tags.cpln/owner", "email", "idp"]


def test_an_update_may_change_idp_and_tags_but_not_the_email() -> None:
    old = stored(USER, {"email": ADA, "idp": "google.com"}, ADA)
    item, errors = write(USER, {"email": ADA, "idp": "github.com", "tags": {"a": 1}}, ADA, old)
    assert errors == [] and (item["idp"], item["tags"]) == ("github.com", {"a": 1})
    _, errors = write(USER, {"email": "grace@example.com"}, ADA, old)
    assert paths(errors) == ["email"]


def test_status_is_empty() -> None:
    assert USER.status.compute(stored(USER, {"email": ADA}, ADA), CTX) == {}


def test_declaration() -> None:
    assert REGISTRY["user"] is USER
    assert (USER.scope, USER.presentation.title, USER.schema.has_description) == ("org", "User", False)
    # Invitation creates users; PUT would create a missing one, so it is not a verb either.
    assert USER.access.verbs == frozenset({"get", "list", "patch", "delete"})
    assert USER.schema.server_fields == frozenset()
    assert {"email", "idp", "id", "name"} <= set(USER.presentation.query_properties)
    assert "description" not in USER.presentation.query_properties
    assert set(USER.access.permissions) == {"delete", "edit", "impersonate", "invite", "manage", "view"}
