"""The kinds as the command line names them: which exist, which live in a GVC, and their aliases.

The client side may not import ``plinth.kinds`` (the ``client-side`` import contract), so this
reads the table generated from the kind declarations (``plinth/kindfacts.py``, written by
``python -m plinth.kinds.facts``), which imports nothing: ``plinth get`` and completion stay
fast to import.

Aliases: the plural of every kind (``policies``, ``identities``...) and the official CLI's
short names (``vs``, ``sa``, ``id``, ``loc``, ``w``), each declared with its kind.
"""

from __future__ import annotations

from plinth.kindfacts import GVC_SCOPED, KINDS, PLURALS, SHORT_NAMES

__all__ = ["ALIASES", "GVC_SCOPED", "KINDS", "SHORT_NAMES", "canonical_kind", "gvc_scoped"]

ALIASES: dict[str, str] = {**PLURALS, **SHORT_NAMES}


def canonical_kind(name: str) -> str | None:
    """The kind ``name`` means (itself, a plural or a short name, any case), or ``None``."""
    lowered = name.lower()
    if lowered in KINDS:
        return lowered
    return ALIASES.get(lowered)


def gvc_scoped(kind: str) -> bool:
    """Whether items of ``kind`` live inside a GVC (``/org/{org}/gvc/{gvc}/{kind}/{name}``)."""
    return kind in GVC_SCOPED
