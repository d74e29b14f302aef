"""Compile a :class:`~plinth.storage.query.ListRequest` to SQL, once for both backends.

The semantics live here; a :class:`Dialect` only says how each backend spells a JSON read,
a type test, a regex and a placeholder. That keeps SQLite and PostgreSQL answering the same
query the same way (the property tests compare both with an in-memory evaluator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from plinth.storage.query import Filter, ListRequest, PageStart, Scalar, Sort, Term

NUMERIC_TYPES = ("integer", "real", "number")


class Dialect(Protocol):
    placeholder: str

    def path_param(self, path: tuple[str, ...]) -> Any:
        """The bound parameter naming a JSON path inside ``doc``."""
        ...

    def value(self) -> str:
        """SQL reading the JSON value at a path parameter, comparable with :meth:`literal`."""
        ...

    def type_of(self) -> str:
        """SQL giving the JSON type name at a path parameter (NULL when absent):
        one of object, array, text/string, integer/real/number, true/false/boolean, null."""
        ...

    def text(self) -> str:
        """SQL reading the value at a path parameter as text (``true`` for booleans)."""
        ...

    def literal(self, value: Scalar) -> tuple[str, Any]:
        """SQL and parameter for a scalar compared with :meth:`value`."""
        ...

    def regex(self, subject: str) -> str:
        """SQL testing ``subject`` against a regex bound as the next parameter."""
        ...

    def bool_types(self) -> tuple[str, ...]: ...

    def string_type(self) -> str: ...


@dataclass
class SQL:
    text: str
    params: list[Any]


class _Builder:
    def __init__(self, dialect: Dialect):
        self.d = dialect
        self.params: list[Any] = []

    def ph(self, value: Any) -> str:
        self.params.append(value)
        return self.d.placeholder

    def read(self, template: str, path: tuple[str, ...]) -> str:
        """Fill every ``{p}`` of a dialect template with the path (one parameter per use)."""
        pieces = template.split("{p}")
        out = pieces[0]
        for piece in pieces[1:]:
            out += self.ph(self.d.path_param(path)) + piece
        return out

    def term(self, term: Term) -> str:
        d = self.d
        if term.parent:
            sql = f"parent = {self.ph(term.value)}"
            return sql if term.op == "=" else f"NOT ({sql})" if term.op == "!=" else "1=0"
        path = ("tags", term.tag) if term.tag is not None else (term.path or ())
        if term.op == "exists":
            return f"({self.read(d.type_of(), path)}) IS NOT NULL"
        if term.op == "!exists":
            return f"({self.read(d.type_of(), path)}) IS NULL"
        if term.op == "!=":
            return f"NOT COALESCE(({self.equals(term, path)}), FALSE)"
        if term.op == "=":
            return self.equals(term, path)
        if term.op in (">", ">=", "<", "<="):
            value = term.value
            if isinstance(value, bool) or value is None:
                return "1=0"
            guard = self.type_guard(value)
            lit_sql, lit = d.literal(value)
            # Parameters are bound in textual order: build the SQL left to right.
            type_sql = self.read(d.type_of(), path)
            value_sql = self.read(d.value(), path)
            return f"(({type_sql}) IN ({guard}) AND {value_sql} {term.op} {lit_sql.replace('{v}', self.ph(lit))})"
        text = self.read(d.text(), path)
        if term.op in ("~", "=~"):
            sql = d.regex(text)
            return sql.replace("{v}", self.ph(str(term.value)))
        # contains: a substring of the text form
        return f"{text} LIKE {self.ph(_like(str(term.value)))} ESCAPE '\\'"

    def type_guard(self, value: Scalar) -> str:
        """The JSON type names a value may be compared with: numbers with numbers, else strings."""
        if isinstance(value, int | float):
            return ", ".join(f"'{t}'" for t in NUMERIC_TYPES)
        return f"'{self.d.string_type()}'"

    def equals(self, term: Term, path: tuple[str, ...]) -> str:
        d = self.d
        if term.tag is not None:
            value = term.value
            text_value = "true" if value is True else "false" if value is False else "" if value is None else str(value)
            return f"{self.read(d.text(), path)} = {self.ph(text_value)}"
        if term.value is None:
            return f"({self.read(d.type_of(), path)}) = 'null'"
        if isinstance(term.value, bool):
            wanted = d.bool_types()[0 if term.value else 1]
            return f"({self.read(d.type_of(), path)}) = '{wanted}'"
        lit_sql, lit = d.literal(term.value)
        type_guard = self.type_guard(term.value)
        return (
            f"(({self.read(d.type_of(), path)}) IN ({type_guard}) AND "
            f"{self.read(d.value(), path)} = {lit_sql.replace('{v}', self.ph(lit))})"
        )

    def filter(self, flt: Filter) -> str:
        if not flt.terms:
            return "1=1"
        parts = [f"({self.term(t)})" for t in flt.terms]
        if flt.match == "any":
            return " OR ".join(parts)
        if flt.match == "none":
            return "NOT (" + " OR ".join(parts) + ")"
        return " AND ".join(parts)

    def after_key(self, start: PageStart) -> str:
        p1, p2, n = self.ph(start.parent), self.ph(start.parent), self.ph(start.name)
        return f"(parent > {p1} OR (parent = {p2} AND name > {n}))"

    def keyset(self, start: PageStart, sort: Sort | None) -> str:
        """Rows strictly after ``start`` in the order :meth:`order` produces."""
        if sort is None:
            return self.after_key(start)
        value = self.d.value()
        if start.sort_value is None:
            # NULLs sort first ascending and last descending.
            null_then_key = f"({self.read(value, sort.path)} IS NULL AND {self.after_key(start)})"
            if sort.descending:
                return null_then_key
            return f"({null_then_key} OR {self.read(value, sort.path)} IS NOT NULL)"
        lit_sql, lit = self.d.literal(start.sort_value)
        op = "<" if sort.descending else ">"
        beyond = f"{self.read(value, sort.path)} {op} {lit_sql.replace('{v}', self.ph(lit))}"
        same = f"({self.read(value, sort.path)} = {lit_sql.replace('{v}', self.ph(lit))} AND {self.after_key(start)})"
        tail = f" OR {self.read(value, sort.path)} IS NULL" if sort.descending else ""
        return f"({beyond} OR {same}{tail})"

    def order(self, sort: Sort | None) -> str:
        if sort is None:
            return "parent, name"
        expr = self.read(self.d.value(), sort.path)
        direction = "DESC NULLS LAST" if sort.descending else "ASC NULLS FIRST"
        return f"{expr} {direction}, parent, name"


def _like(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def compile_list(request: ListRequest, dialect: Dialect, select: str) -> SQL:
    """``SELECT {select} FROM resources WHERE ... ORDER BY ... LIMIT n`` for the request."""
    b = _Builder(dialect)
    where = [f"org = {b.ph(request.org)}", f"kind = {b.ph(request.kind)}"]
    if request.parent is not None:
        where.append(f"parent = {b.ph(request.parent)}")
    where.append(f"({b.filter(request.filter)})")
    if request.start is not None:
        where.append(b.keyset(request.start, request.filter.sort))
    order = b.order(request.filter.sort)
    text = f"SELECT {select} FROM resources WHERE {' AND '.join(where)} ORDER BY {order} LIMIT {b.ph(request.limit)}"
    return SQL(text, b.params)
