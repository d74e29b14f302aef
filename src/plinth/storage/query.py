"""A backend-neutral, already-validated query: what the storage backends compile to SQL.

The engine parses the wire query (docs.controlplane.com/core/query) into these values and rejects anything it cannot
express; backends translate them, so both evaluate exactly the same semantics
(``evaluate.py`` is the same semantics in plain Python, and the conformance suite checks
both backends against it):

- ``Term(op, path=("spec","dnsMode"))`` reads a JSON path of the stored item, walking object
  properties only; ``Term(op, tag="team")`` reads a tag, compared as text (below);
  ``Term("=" | "!=", parent=True)`` compares the GVC of a GVC-scoped item (``rel: gvc``,
  ``""`` for org-scoped items) with the value's text form; any other op never matches.
- A property holding JSON ``null`` exists; a missing one does not. Missing values match only
  ``!=`` and ``!exists``.
- ``=`` on a path is typed: a string equals only a string, a number only a number
  (``1`` equals ``1.0``), a boolean only that boolean, ``None`` only a JSON ``null``.
  ``!=`` is exactly the negation of ``=``.
- Ordering ops (``> >= < <=``) compare numbers with numbers and strings with strings, by code
  point (ISO dates compare as strings); a value of the other type, a boolean or ``None``
  never matches.
- The *text form* of a stored value: a string as it is, ``true``/``false`` for booleans, a
  number in its JSON form (``5``, ``2.5``, ``2.0``; exponents and more than 15 significant
  digits are not portable between backends).
  ``null``, objects and arrays have none, so they match no text test.
  ``=`` and ``!=`` on a tag compare text forms: ``tag=5`` matches the tags ``"5"`` and ``5``,
  ``True`` matches ``"true"`` and ``true``, and a value of ``None`` compares with ``""``.
  Every other op reads a tag exactly as it reads a path.
- ``~`` and ``=~`` search the text form for the value's text as a regular expression (RE2's
  syntax, at most 256 characters, repetition counts at most 255: ``regex.py``, which runs
  them in Python; PostgreSQL runs its ``~`` on the same patterns; a pattern the backend cannot
  compile raises ``StorageError("invalid")``); ``contains`` finds the value's text in the
  text form as a case-sensitive substring.
- ``match``: ``all`` (every term), ``any`` (at least one), ``none`` (no term); no terms
  matches everything.
- Sorting by a path orders by type, then value: absent values (missing, ``null``, objects,
  arrays) first, then ``false``, ``true``, numbers, strings (by code point); ``descending``
  reverses that. Ties, and every unsorted list, are ordered by parent, then name, ascending.
  Names, parents and strings compare by code point on both backends.
- Path parts and tag names never contain ``"`` (SQLite's JSON paths cannot name such a key);
  a query that does raises ``StorageError("invalid")``.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

Op = Literal["=", "!=", ">", ">=", "<", "<=", "~", "=~", "contains", "exists", "!exists"]
OPS: tuple[Op, ...] = get_args(Op)
Scalar = str | int | float | bool | None


#: Sort ranks of stored values (see the module docstring); absent values rank 0.
RANK_ABSENT, RANK_FALSE, RANK_TRUE, RANK_NUMBER, RANK_STRING = range(5)


def scalar_text(value: Scalar) -> str:
    """The text form of a term's value (``None`` reads as ``""``, as for a tag without value)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def sort_rank(value: Scalar) -> int:
    """Where a sort value's type ranks; within a rank, numbers and strings order by value."""
    if value is None:
        return RANK_ABSENT
    if isinstance(value, bool):
        return RANK_TRUE if value else RANK_FALSE
    if isinstance(value, int | float):
        return RANK_NUMBER
    return RANK_STRING


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
    """Keyset position: the last row of the previous page (its sort value, parent and name).

    ``sort_value`` is ``evaluate.sort_value`` of that row's item (``None`` when unsorted).
    """

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


#: Rows a :meth:`Storage.snapshot` reads per page.
SNAPSHOT_PAGE = 1000


def snapshot_pages(request: ListRequest) -> Generator[ListRequest, list[Any], None]:
    """The pages that read everything ``request`` selects, in key order (its sort dropped): send
    each page's records (anything with a ``key``) to get the next page; stops after a short one."""
    page = replace(request, limit=SNAPSHOT_PAGE, start=None, filter=replace(request.filter, sort=None))
    while True:
        rows = yield page
        if len(rows) < SNAPSHOT_PAGE:
            return
        last = rows[-1].key
        page = replace(page, start=PageStart(last.parent, last.name))
