"""The auditctx kind (docs.controlplane.com/reference/auditctx) through build_candidate: no spec, ``origin`` the
server's."""

from __future__ import annotations

from typing import Any

import pytest
from _identity_support import SERVER_ENVELOPE, paths, stored, write

from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.auditctx import AUDITCTX, BUILTIN_CONTEXT
from plinth.kinds.base import CRUD_VERBS


def test_declaration() -> None:
    assert REGISTRY["auditctx"] is AUDITCTX
    assert (AUDITCTX.scope, AUDITCTX.schema.spec_model, AUDITCTX.schema.top_level_model) == ("org", None, None)
    assert AUDITCTX.access.verbs == CRUD_VERBS - {"delete"}  # never deleted: a DELETE is a 405
    assert (
        AUDITCTX.access.permissions is PERMISSIONS["auditctx"].permissions
        and "delete" not in AUDITCTX.access.permissions
    )
    assert AUDITCTX.lifecycle.builtin_is_read_only and AUDITCTX.schema.server_fields == frozenset({"origin"})
    assert (AUDITCTX.presentation.terraform_resource, AUDITCTX.presentation.text_columns) == (
        "cpln_audit_context",
        ("NAME", "DESCRIPTION", "ORIGIN", "TAGS"),
    )
    assert "origin" in AUDITCTX.presentation.query_properties and BUILTIN_CONTEXT == "cpln"


def test_what_cpln_auditctx_create_sends() -> None:
    assert stored(AUDITCTX, {"name": "payments", "tags": {}}, "payments") == {
        "kind": "auditctx",
        "name": "payments",
        "description": "payments",
        "tags": {},
        "origin": "default",
    }


def test_origin_is_the_servers_and_carried_over() -> None:
    item, errors = write(AUDITCTX, {**SERVER_ENVELOPE, "origin": "builtin", "description": "PCI"}, "payments")
    assert errors == [] and item["origin"] == "default" and item["description"] == "PCI"
    old = {**item, "origin": "builtin"}
    again, errors = write(AUDITCTX, {"description": "changed"}, "payments", old=old)
    assert errors == [] and again["origin"] == "builtin"
    assert write(AUDITCTX, item, "payments", old=item) == (item, [])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"spec": {"retention": 30}}, ["spec"]),
        ({"spec": {}}, []),
        ({"data": {}}, ["data"]),
        ({"kind": "audit"}, ["kind"]),
        ({"description": " padded"}, ["description"]),
        ({"tags": {"cpln/builtin": "true"}}, ["tags.cpln/builtin"]),
    ],
)
def test_only_description_and_tags_are_the_clients(body: dict[str, Any], expected: list[str]) -> None:
    assert paths(write(AUDITCTX, body, "payments")[1]) == expected
