"""What a GVC's ``prepare`` fills in: the server-owned ``alias`` (see the package docstring)."""

from __future__ import annotations

import base64
import hashlib

from plinth.kinds.base import Item, KindContext

ALIAS_LENGTH = 13


def gvc_alias(item_id: str) -> str:
    """The alias of the GVC whose id is ``item_id``: a pure function of the id."""
    digest = hashlib.sha256(item_id.encode()).digest()
    return base64.b32encode(digest).decode().lower()[:ALIAS_LENGTH]


def prepare_gvc(item: Item, old: Item | None, ctx: KindContext) -> None:
    """On create, set ``alias`` from ``ctx.id``; on update the engine has carried it over.

    Without an id (``ctx.id is None``, a candidate that will never be stored) no alias is
    set, rather than one that would not match the stored item's.
    """
    if old is None and ctx.id is not None:
        item["alias"] = gvc_alias(ctx.id)
