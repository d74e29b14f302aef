"""Workloads and identities: declared so that they can be read (as nothing), never written."""

from __future__ import annotations

import pytest

from plinth.kinds import REGISTRY
from plinth.kinds.permissions import PERMISSIONS
from plinth.kinds.unserved import IDENTITY, WORKLOAD


@pytest.mark.parametrize("kind", [WORKLOAD, IDENTITY], ids=lambda k: k.name)
def test_read_only_gvc_kinds_with_the_platforms_permissions(kind) -> None:  # type: ignore[no-untyped-def]
    assert REGISTRY[kind.name] is kind
    assert (kind.scope, kind.verbs) == ("gvc", frozenset({"get", "list"}))
    assert kind.permissions == PERMISSIONS[kind.name].permissions
    assert kind.spec_model is None and kind.references is not None
