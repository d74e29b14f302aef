"""The kinds as the command line names them: which exist, which live in a GVC, and their aliases.

The client side may not import ``plinth.kinds`` (the ``client-side`` import contract), so it
keeps this small copy; ``tests/cli/test_kindnames.py`` holds it in step with the server's
registry (every served kind here, and the same GVC scope as ``kinds/links.py``'s
``GVC_SCOPED_KINDS``). It is not taken from ``convert/crd.py``: ``plinth.convert`` is too slow
to import for ``plinth get`` and completion.

Aliases: the plural of every kind (``policies``, ``identities``...) and the official CLI's
short names (``vs``, ``sa``, ``id``, ``loc``, ``w``).
"""

from __future__ import annotations

#: Every kind the server serves, in the order completion offers them.
KINDS: tuple[str, ...] = (
    "agent",
    "auditctx",
    "cloudaccount",
    "domain",
    "group",
    "gvc",
    "identity",
    "image",
    "ipset",
    "location",
    "org",
    "policy",
    "quota",
    "secret",
    "serviceaccount",
    "user",
    "volumeset",
    "workload",
)
GVC_SCOPED: frozenset[str] = frozenset({"identity", "volumeset", "workload"})
SHORT_NAMES: dict[str, str] = {
    "vs": "volumeset",
    "sa": "serviceaccount",
    "id": "identity",
    "loc": "location",
    "w": "workload",
}


def plural(kind: str) -> str:
    if kind.endswith("y") and not kind.endswith(("ey", "ay")):
        return kind[:-1] + "ies"
    return kind + "s"


ALIASES: dict[str, str] = {**{plural(kind): kind for kind in KINDS}, **SHORT_NAMES}


def canonical_kind(name: str) -> str | None:
    """The kind ``name`` means (itself, a plural or a short name, any case), or ``None``."""
    lowered = name.lower()
    if lowered in KINDS:
        return lowered
    return ALIASES.get(lowered)


def gvc_scoped(kind: str) -> bool:
    """Whether items of ``kind`` live inside a GVC (``/org/{org}/gvc/{gvc}/{kind}/{name}``)."""
    return kind in GVC_SCOPED
