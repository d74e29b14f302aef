"""The CLI's kinds (``plinth.cli.kindnames``, read from the generated ``plinth.kindfacts``) agree with the registry."""

from __future__ import annotations

from plinth.cli.kindnames import ALIASES, GVC_SCOPED, KINDS, canonical_kind
from plinth.kinds import KINDS as SERVED
from plinth.kinds.links import GVC_SCOPED_KINDS


def test_every_served_kind_and_its_scope() -> None:
    assert sorted(KINDS) == sorted(kind.name for kind in SERVED)
    assert {kind.name for kind in SERVED if kind.scope == "gvc"} == GVC_SCOPED == GVC_SCOPED_KINDS


def test_plurals_and_short_names_resolve_and_never_shadow_a_kind() -> None:
    assert [canonical_kind(name) for name in ("policies", "identities", "vs", "SA", "gvcs", "w", "Workload")] == [
        "policy",
        "identity",
        "volumeset",
        "serviceaccount",
        "gvc",
        "workload",
        "workload",
    ]
    assert canonical_kind("nope") is None
    assert not set(ALIASES) & set(KINDS)
    assert all(canonical_kind(kind + "s" if not kind.endswith("y") else kind[:-1] + "ies") == kind for kind in KINDS)
