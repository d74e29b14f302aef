"""The query semantics of ``query.py`` in plain Python: the oracle the SQL backends must agree with.

The conformance suite compares every backend with these functions on random items and
filters; the engine uses :func:`sort_value` to build the next page's
:class:`~plinth.storage.query.PageStart`, and may filter in memory with :func:`matches`.
"""

from __future__ import annotations

import functools
from typing import Any

from plinth.storage import regex
from plinth.storage.query import RANK_NUMBER, RANK_STRING, Filter, Scalar, Sort, Term, scalar_text, sort_rank

#: What :func:`lookup` returns for a path that leads nowhere (distinct from a JSON ``null``).
MISSING: Any = object()


def lookup(doc: Any, path: tuple[str, ...]) -> Any:
    """The JSON value at ``path``, walking object properties only, or :data:`MISSING`."""
    current = doc
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return MISSING
        current = current[part]
    return current


def stored_text(value: Any) -> str | None:
    """The text form of a stored value; ``None`` for ``null``, objects, arrays and missing."""
    if value is MISSING or value is None or isinstance(value, dict | list):
        return None
    return scalar_text(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _typed_equals(stored: Any, wanted: Scalar) -> bool:
    if wanted is None:
        return stored is None
    if isinstance(wanted, bool):
        return isinstance(stored, bool) and stored == wanted
    if isinstance(wanted, int | float):
        return _is_number(stored) and stored == wanted
    return isinstance(stored, str) and stored == wanted


def _ordered(stored: Any, op: str, wanted: Scalar) -> bool:
    if isinstance(wanted, bool) or wanted is None:
        return False
    comparable = _is_number(stored) if isinstance(wanted, int | float) else isinstance(stored, str)
    if not comparable:
        return False
    if op == ">":
        return bool(stored > wanted)
    if op == ">=":
        return bool(stored >= wanted)
    if op == "<":
        return bool(stored < wanted)
    return bool(stored <= wanted)


def _parent_matches(term: Term, parent: str) -> bool:
    if term.op == "=":
        return parent == scalar_text(term.value)
    if term.op == "!=":
        return parent != scalar_text(term.value)
    return False


def _equals(term: Term, stored: Any) -> bool:
    if term.tag is not None:
        return stored_text(stored) == scalar_text(term.value)
    return stored is not MISSING and _typed_equals(stored, term.value)


def term_matches(term: Term, doc: dict[str, Any], parent: str) -> bool:
    """Whether one term holds for the item ``doc`` stored under ``parent``."""
    if term.parent:
        return _parent_matches(term, parent)
    stored = lookup(doc, ("tags", term.tag) if term.tag is not None else (term.path or ()))
    if term.op == "exists":
        return stored is not MISSING
    if term.op == "!exists":
        return stored is MISSING
    if term.op == "=":
        return _equals(term, stored)
    if term.op == "!=":
        return not _equals(term, stored)
    if term.op in (">", ">=", "<", "<="):
        return stored is not MISSING and _ordered(stored, term.op, term.value)
    text = stored_text(stored)
    if text is None:
        return False
    if term.op in ("~", "=~"):
        return regex.search(scalar_text(term.value), text)  # RE2: linear in the text
    return scalar_text(term.value) in text  # contains


def matches(flt: Filter, doc: dict[str, Any], parent: str) -> bool:
    """Whether the item ``doc`` stored under ``parent`` passes the filter (its sort is ignored)."""
    results = (term_matches(term, doc, parent) for term in flt.terms)
    if flt.match == "any":
        return any(results) if flt.terms else True
    if flt.match == "none":
        return not any(results)
    return all(results)


def sort_value(doc: dict[str, Any], path: tuple[str, ...]) -> Scalar:
    """The value a sort by ``path`` orders ``doc`` by: a scalar, or ``None`` when absent."""
    value = lookup(doc, path)
    if value is MISSING or isinstance(value, dict | list):
        return None
    return value


@functools.total_ordering
class _Descending:
    """Inverts the order of the wrapped key, so one tuple can mix directions."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[int, Any]):
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and self.key == other.key

    def __lt__(self, other: _Descending) -> bool:
        return other.key < self.key

    def __hash__(self) -> int:
        return hash(self.key)


def sort_key(sort: Sort | None, doc: dict[str, Any], parent: str, name: str) -> tuple[Any, ...]:
    """A key for ``sorted`` giving the order a list with this sort returns items in."""
    if sort is None:
        return (parent, name)
    value = sort_value(doc, sort.path)
    rank = sort_rank(value)
    typed: tuple[int, Any] = (rank, value if rank in (RANK_NUMBER, RANK_STRING) else 0)
    return (_Descending(typed) if sort.descending else typed, parent, name)
