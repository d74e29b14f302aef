"""A backend-neutral, already-validated query: what the storage backends compile to SQL.

The engine parses the wire query (api.md §4) into these values and rejects anything it cannot
express; backends translate them, so both evaluate exactly the same semantics:

- ``Term(op, path=("spec","dnsMode"))`` reads a JSON path of the stored item;
  ``Term(op, tag="team")`` reads a tag (compared as text: booleans read ``"true"``);
  ``Term("=", parent=True)`` compares the GVC of a GVC-scoped item (``rel: gvc``).
- Missing values match only ``!=`` and ``!exists``.
- Ordering ops (``> >= < <=``) compare numbers with numbers and strings with strings
  (ISO dates compare as strings); a value of the other type never matches.
- ``~`` and ``=~`` are regular-expression searches; ``contains`` is a substring test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Op = Literal["=", "!=", ">", ">=", "<", "<=", "~", "=~", "contains", "exists", "!exists"]
OPS: tuple[str, ...] = ("=", "!=", ">", ">=", "<", "<=", "~", "=~", "contains", "exists", "!exists")
Scalar = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Term:
    op: Op
    value: Scalar = None
    path: tuple[str, ...] | None = None
    tag: str | None = None
    parent: bool = False


@dataclass(frozen=True, slots=True)
class Sort:
    path: tuple[str, ...]
    descending: bool = False


@dataclass(frozen=True, slots=True)
class Filter:
    match: Literal["all", "any", "none"] = "all"
    terms: tuple[Term, ...] = ()
    sort: Sort | None = None


@dataclass(frozen=True, slots=True)
class PageStart:
    """Keyset position: the last row of the previous page (its sort value, parent and name)."""

    parent: str
    name: str
    sort_value: Scalar = None


@dataclass(frozen=True, slots=True)
class ListRequest:
    org: str
    kind: str
    #: ``None`` lists across every parent (GVC-scoped kinds listed org-wide).
    parent: str | None
    limit: int
    start: PageStart | None = None
    filter: Filter = field(default_factory=Filter)
