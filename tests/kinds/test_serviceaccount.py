"""The serviceaccount kind through build_candidate: server-owned keys and origin, the addKey body."""

from __future__ import annotations

from typing import Any

import pytest
from _identity_support import CTX, SERVER_ENVELOPE, paths, stored, write
from pydantic import ValidationError

from plinth.kinds import REGISTRY
from plinth.kinds.base import CRUD_VERBS
from plinth.kinds.serviceaccount import SERVICEACCOUNT, AddKeyRequest
from plinth.kinds.validation import model_errors

KEYS = [
    {"name": "sAbCdEfGhIjKlMnO", "created": "2026-01-02T00:00:00.000Z", "description": "ci"},
    {"name": "sPqRsTuVwXyZaBcD", "created": "2026-01-03T00:00:00.000Z", "description": "deploy"},
]


def test_minimal_service_account_has_origin_default_and_no_keys() -> None:
    item, errors = write(SERVICEACCOUNT, {}, "ci")
    assert errors == []
    assert item == {
        "kind": "serviceaccount",
        "name": "ci",
        "description": "ci",
        "tags": {},
        "origin": "default",
        "keys": [],
    }


def test_maximal_service_account() -> None:
    body = {"kind": "serviceaccount", "description": "CI pipeline", "tags": {"team": "core", "cpln/protected": True}}
    item, errors = write(SERVICEACCOUNT, body, "ci")
    assert errors == []
    assert {k: item[k] for k in body} == body


@pytest.mark.parametrize(
    "body",
    [
        {"keys": KEYS, "origin": "builtin"},
        {"keys": [{"name": "k", "key": "secret"}]},
        {"origin": "nonsense", "keys": "not even a list"},
    ],
)
def test_clients_never_set_keys_or_origin(body: dict[str, Any]) -> None:
    item, errors = write(SERVICEACCOUNT, body, "ci")
    assert errors == []
    assert (item["origin"], item["keys"]) == ("default", [])


def test_an_update_keeps_the_stored_keys_and_origin_whatever_the_client_sends() -> None:
    old = {**stored(SERVICEACCOUNT, {}, "controlplane"), "origin": "builtin", "keys": KEYS}
    item, errors = write(SERVICEACCOUNT, {"description": "new", "keys": [], "origin": "default"}, "controlplane", old)
    assert errors == []
    assert (item["description"], item["origin"], item["keys"]) == ("new", "builtin", KEYS)
    assert item["keys"] is not old["keys"]  # carried over as a copy; old is never mutated


def test_server_owned_envelope_is_ignored() -> None:
    item, errors = write(SERVICEACCOUNT, {**SERVER_ENVELOPE, "description": "d"}, "ci")
    assert errors == []
    assert not set(SERVER_ENVELOPE) & set(item)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("ci", True),
        ("a" * 64, True),
        ("c1-deploy", True),
        ("a", False),
        ("a" * 65, False),
        ("CI", False),
        ("ci-", False),
    ],
)
def test_names_follow_the_common_rule(name: str, ok: bool) -> None:
    assert paths(write(SERVICEACCOUNT, {}, name)[1]) == ([] if ok else ["name"])


@pytest.mark.parametrize(
    ("description", "ok"), [("x", True), ("x" * 250, True), ("x" * 251, False), (" x", False), (3, False)]
)
def test_description_bounds(description: Any, ok: bool) -> None:
    assert paths(write(SERVICEACCOUNT, {"description": description}, "ci")[1]) == ([] if ok else ["description"])


def test_unknown_fields_and_a_spec_are_rejected_each_once() -> None:
    _, errors = write(SERVICEACCOUNT, {"key": "s.x.y", "spec": {"a": 1}, "email": "a@b.co"}, "ci")
    assert paths(errors) == ["key", "email", "spec"]


def test_several_errors_at_once_with_their_paths() -> None:
    _, errors = write(SERVICEACCOUNT, {"description": " pad", "tags": {"k": [1]}, "extra": 1}, "CI")
    assert paths(errors) == ["extra", "name", "description", "tags.k"]


def test_status_is_empty() -> None:
    assert SERVICEACCOUNT.status.compute(stored(SERVICEACCOUNT, {}, "ci"), CTX) == {}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"description": "ci"}, []),
        ({"description": "x" * 250}, []),
        ({"description": "x" * 251}, ["description"]),
        ({"description": ""}, ["description"]),
        ({"description": " ci"}, ["description"]),
        ({"description": 5}, ["description"]),
        ({}, ["description"]),
        ({"description": "ci", "name": "k"}, ["name"]),
    ],
)
def test_add_key_body(body: dict[str, Any], expected: list[str]) -> None:
    try:
        AddKeyRequest.model_validate(body)
        found: list[str] = []
    except ValidationError as exc:
        found = paths(model_errors(exc))
    assert found == expected


def test_declaration() -> None:
    assert REGISTRY["serviceaccount"] is SERVICEACCOUNT
    assert (SERVICEACCOUNT.scope, SERVICEACCOUNT.presentation.title) == ("org", "ServiceAccount")
    assert SERVICEACCOUNT.schema.server_fields == frozenset({"keys", "origin"})
    assert SERVICEACCOUNT.schema.droppable_server_lists == frozenset({"keys"})
    assert SERVICEACCOUNT.access.verbs == CRUD_VERBS
    assert "origin" in SERVICEACCOUNT.presentation.query_properties
    # docs.controlplane.com/reference/policy, confirmed table.
    assert dict(SERVICEACCOUNT.access.permissions).keys() == {"addKey", "create", "delete", "edit", "manage", "view"}
    assert dict(SERVICEACCOUNT.access.implied) == {
        "edit": ("view",),
        "manage": ("addKey", "create", "delete", "edit", "view"),
    }
