"""Identities: declared so that they can be read (as nothing), never written."""

from __future__ import annotations

from plinth.kinds import REGISTRY
from plinth.kinds.permissions import PERMISSIONS
from plinth.kinds.unserved import IDENTITY


def test_identity_is_a_read_only_gvc_kind_with_the_platforms_permissions() -> None:
    assert REGISTRY["identity"] is IDENTITY
    assert (IDENTITY.scope, IDENTITY.verbs) == ("gvc", frozenset({"get", "list"}))
    assert IDENTITY.permissions == PERMISSIONS["identity"].permissions
    assert IDENTITY.spec_model is None and IDENTITY.references is not None
