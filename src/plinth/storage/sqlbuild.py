"""Compile a :class:`~plinth.storage.query.ListRequest` to SQL, once for both backends.

The semantics (``query.py``) live here; a :class:`Dialect` only says how a backend reads a
JSON value of a given type, runs a regex, and which index hints it can offer. SQL is built
from :class:`Fragment` values that carry their own parameters, so placeholders and
parameters can never drift apart however the pieces are nested.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from plinth.storage.base import StorageError
from plinth.storage.query import (
    RANK_ABSENT,
    RANK_FALSE,
    RANK_NUMBER,
    RANK_STRING,
    RANK_TRUE,
    Filter,
    ListRequest,
    PageStart,
    Scalar,
    Sort,
    Term,
    scalar_text,
    sort_rank,
)


@dataclass(frozen=True, slots=True)
class Fragment:
    """A piece of SQL and the parameters its placeholders take, in order."""

    text: str
    params: tuple[Any, ...] = ()


def sql(template: str, *parts: Fragment) -> Fragment:
    """Fill each ``{}`` in ``template`` with the next part, keeping parameters in text order."""
    pieces = template.split("{}")
    if len(pieces) != len(parts) + 1:
        raise ValueError(f"{template!r} has {len(pieces) - 1} slots for {len(parts)} parts")
    text, params = pieces[0], list[Any]()
    for part, piece in zip(parts, pieces[1:], strict=True):
        text += part.text + piece
        params.extend(part.params)
    return Fragment(text, tuple(params))


def join(separator: str, parts: list[Fragment]) -> Fragment:
    return sql(separator.join(["{}"] * len(parts)), *parts)


#: The integers SQLite can bind (a signed 64-bit integer).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
TRUE = Fragment("1=1")
FALSE = Fragment("1=0")


class Dialect(Protocol):
    """How one backend reads JSON. Every ``path`` is a tuple of object keys inside ``doc``."""

    placeholder: str

    def type_of(self, path: tuple[str, ...]) -> Fragment:
        """The value's type as one of ``null true false number string object array``;
        SQL NULL when the path is missing."""
        ...

    def number(self, path: tuple[str, ...]) -> Fragment:
        """The value as a double when it is a JSON number, else NULL."""
        ...

    def string(self, path: tuple[str, ...]) -> Fragment:
        """The value when it is a JSON string, else NULL; compares by code point."""
        ...

    def text(self, path: tuple[str, ...]) -> Fragment:
        """The value's text form (``query.py``) when it is a scalar other than null, else NULL."""
        ...

    def regex(self, subject: Fragment, pattern: Fragment) -> Fragment:
        """Whether the regex ``pattern`` is found in ``subject``."""
        ...

    def tag_hint(self, tag: str, values: tuple[Scalar, ...] | None) -> Fragment | None:
        """A condition an index can answer, implied by "tag holds one of ``values``" (or by
        "tag exists" when ``values`` is None); None when the backend has no such index."""
        ...


class _Builder:
    def __init__(self, dialect: Dialect, fixed_parent: bool = False):
        self.d = dialect
        #: When the query pins ``parent``, the keyset is the name alone, which the primary key
        #: answers directly (a row-value comparison on (parent, name) makes SQLite scan and sort).
        self.fixed_parent = fixed_parent

    def bind(self, value: Any) -> Fragment:
        return Fragment(self.d.placeholder, (value,))

    def bind_number(self, value: int | float) -> Fragment:
        """A number compared with what :meth:`Dialect.number` reads (a double on both stores):
        an integer beyond 64 bits, which SQLite cannot bind (JSON allows any), is bound as the
        double it compares as anyway."""
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            return self.bind(float(value))
        return self.bind(value)

    # -- filter terms: each compiles to a condition that is never SQL NULL ----------------

    def term(self, term: Term) -> Fragment:
        return sql("COALESCE(({}), FALSE)", self._term(term))

    def _term(self, term: Term) -> Fragment:
        if term.parent:
            if term.op not in ("=", "!="):
                return FALSE
            return sql(f"parent {term.op} {{}}", self.bind(scalar_text(term.value)))
        path = ("tags", term.tag) if term.tag is not None else (term.path or ())
        if term.op in ("exists", "!exists"):
            return sql("{} IS NOT NULL" if term.op == "exists" else "{} IS NULL", self.d.type_of(path))
        if term.op == "=":
            return self.equals(term, path)
        if term.op == "!=":
            return sql("NOT COALESCE(({}), FALSE)", self.equals(term, path))
        if term.op in (">", ">=", "<", "<="):
            return self.ordered(term, path)
        text = self.d.text(path)
        pattern = scalar_text(term.value)
        if term.op in ("~", "=~"):
            return self.d.regex(text, self.bind(pattern))
        return sql("{} LIKE {} ESCAPE '\\'", text, self.bind(_like(pattern)))

    def equals(self, term: Term, path: tuple[str, ...]) -> Fragment:
        value = term.value
        if term.tag is not None:
            return sql("{} = {}", self.d.text(path), self.bind(scalar_text(value)))
        if value is None:
            return sql("{} = 'null'", self.d.type_of(path))
        if isinstance(value, bool):
            return sql("{} = " + ("'true'" if value else "'false'"), self.d.type_of(path))
        if isinstance(value, int | float):
            return sql("{} = {}", self.d.number(path), self.bind_number(value))
        return sql("{} = {}", self.d.string(path), self.bind(value))

    def ordered(self, term: Term, path: tuple[str, ...]) -> Fragment:
        value = term.value
        if isinstance(value, bool) or value is None:
            return FALSE
        if isinstance(value, int | float):
            return sql(f"{{}} {term.op} {{}}", self.d.number(path), self.bind_number(value))
        return sql(f"{{}} {term.op} {{}}", self.d.string(path), self.bind(value))

    def filter(self, flt: Filter) -> Fragment:
        if not flt.terms:
            return TRUE
        terms = [self.term(t) for t in flt.terms]
        if flt.match == "all":
            return join(" AND ", terms)
        either = sql("({})", join(" OR ", terms))
        return either if flt.match == "any" else sql("NOT {}", either)

    # -- index hints: conditions implied by the filter, kept outside COALESCE so a planner
    #    can use them (a GIN index on tags, the key index for a parent term) ---------------

    def hint(self, term: Term) -> Fragment | None:
        if term.parent:
            return sql("parent = {}", self.bind(scalar_text(term.value))) if term.op == "=" else None
        if term.tag is None:
            return None
        if term.op == "exists":
            return self.d.tag_hint(term.tag, None)
        if term.op == "=":
            return self.d.tag_hint(term.tag, _values_with_text(scalar_text(term.value)))
        return None

    def hints(self, flt: Filter) -> list[Fragment]:
        found = [self.hint(t) for t in flt.terms]
        if flt.match == "all":
            return [h for h in found if h is not None]
        if flt.match == "any" and found and all(h is not None for h in found):
            return [sql("({})", join(" OR ", [h for h in found if h is not None]))]
        return []

    # -- order and keyset -----------------------------------------------------------------

    def rank(self, path: tuple[str, ...]) -> Fragment:
        return sql(
            f"CASE {{}} WHEN 'false' THEN {RANK_FALSE} WHEN 'true' THEN {RANK_TRUE} "
            f"WHEN 'number' THEN {RANK_NUMBER} WHEN 'string' THEN {RANK_STRING} ELSE {RANK_ABSENT} END",
            self.d.type_of(path),
        )

    def order(self, sort: Sort | None) -> Fragment:
        if sort is None:
            return Fragment("parent, name")
        direction = "DESC" if sort.descending else "ASC"
        return sql(
            f"{{}} {direction}, {{}} {direction}, {{}} {direction}, parent, name",
            self.rank(sort.path),
            self.d.number(sort.path),
            self.d.string(sort.path),
        )

    def after_key(self, start: PageStart) -> Fragment:
        if self.fixed_parent:
            return sql("name > {}", self.bind(start.name))
        return sql("(parent, name) > ({}, {})", self.bind(start.parent), self.bind(start.name))

    def keyset(self, start: PageStart, sort: Sort | None) -> Fragment:
        """Rows strictly after ``start`` in the order :meth:`order` produces."""
        if sort is None:
            return self.after_key(start)
        op = "<" if sort.descending else ">"
        rank = sort_rank(start.sort_value)
        within = self.after_key(start)
        if rank in (RANK_NUMBER, RANK_STRING):
            if rank == RANK_NUMBER:
                read, value = self.d.number(sort.path), self.bind_number(start.sort_value)  # type: ignore[arg-type]
            else:
                read, value = self.d.string(sort.path), self.bind(start.sort_value)
            within = sql(f"({{}} {op} {{}} OR ({{}} = {{}} AND {{}}))", read, value, read, value, within)
        rank_sql = self.rank(sort.path)
        return sql(f"({{}} {op} {rank} OR ({{}} = {rank} AND {{}}))", rank_sql, rank_sql, within)


def _like(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _values_with_text(text: str) -> tuple[Scalar, ...]:
    """The stored JSON scalars whose text form may be ``text`` (a superset is fine: a hint
    only narrows the rows the exact test then checks)."""
    values: list[Scalar] = [text]
    if text in ("true", "false"):
        values.append(text == "true")
    else:
        try:
            values.append(int(text))
        except ValueError:
            try:
                values.append(float(text))
            except ValueError:
                pass
    return tuple(values)


def _check_paths(flt: Filter) -> None:
    """Reject keys no backend can address the same way (see ``query.py``)."""
    paths = [t.path or () for t in flt.terms] + [(t.tag or "",) for t in flt.terms]
    if flt.sort is not None:
        paths.append(flt.sort.path)
    if any('"' in part for path in paths for part in path):
        raise StorageError("invalid", None, 'a query path or tag name contains "')


def compile_list(request: ListRequest, dialect: Dialect, select: str) -> Fragment:
    """``SELECT {select} FROM resources WHERE ... ORDER BY ... LIMIT n`` for the request."""
    flt = request.filter
    _check_paths(flt)
    b = _Builder(dialect, fixed_parent=request.parent is not None)
    where = [sql("org = {}", b.bind(request.org)), sql("kind = {}", b.bind(request.kind))]
    if request.parent is not None:
        where.append(sql("parent = {}", b.bind(request.parent)))
    where.extend(b.hints(flt))
    where.append(sql("({})", b.filter(flt)))
    if request.start is not None:
        where.append(b.keyset(request.start, flt.sort))
    return sql(
        f"SELECT {select} FROM resources WHERE {{}} ORDER BY {{}} LIMIT {{}}",
        join(" AND ", where),
        b.order(flt.sort),
        b.bind(request.limit),
    )
