"""The official CLI's key order (docs/cli.md, Output formats), applied to every object at every depth.

Known envelope keys go first or last in a fixed order; everything else sits in between in
plain code-unit order, which is what JavaScript's ``<`` on strings gives (Python compares
code points; the two differ only for astral characters, which keys never use in practice).
"""

from __future__ import annotations

from typing import Any

FIRST_KEYS = ("kind", "itemKind", "name", "description", "alias", "tags", "origin", "type", "provider", "data")
LAST_KEYS = ("version", "id", "spec", "status", "created", "lastModified", "manifest", "links")
_FIRST_RANK = {key: rank for rank, key in enumerate(FIRST_KEYS)}
_LAST_RANK = {key: rank for rank, key in enumerate(LAST_KEYS)}


def sort_key(key: str) -> tuple[int, int, str]:
    """A total order equal to the CLI's comparator: first keys, the rest by name, last keys."""
    if key in _FIRST_RANK:
        return (0, _FIRST_RANK[key], "")
    if key in _LAST_RANK:
        return (2, _LAST_RANK[key], "")
    return (1, 0, key)


def sorted_keys(keys: list[str]) -> list[str]:
    return sorted(keys, key=sort_key)


def sort_deep(value: Any) -> Any:
    """A copy of ``value`` whose objects have their keys in the CLI's order, at every depth."""
    if isinstance(value, dict):
        return {key: sort_deep(value[key]) for key in sorted_keys(list(value))}
    if isinstance(value, list):
        return [sort_deep(item) for item in value]
    return value
