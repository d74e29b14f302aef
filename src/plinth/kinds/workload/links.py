"""The links a workload holds (``references`` hook), each at its JSON path."""

from __future__ import annotations

from plinth.kinds.base import Item, Reference


def workload_references(item: Item, org: str) -> list[Reference]:
    """The links in a workload's spec; filled in with the kind's integration."""
    return []
