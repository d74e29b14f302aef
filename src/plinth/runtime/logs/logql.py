"""LogQL, the part of it this service runs: stream selectors and line filters.

Grammar (Loki's documentation, "Log queries"), parsed with ``lark`` (no regular expressions
over the query text)::

    {label="value", label!="value", label=~"re", label!~"re"} |= "text" != "text" |~ "re" !~ "re"

- a **stream selector** of one or more matchers; ``=~`` and ``!~`` match the *whole* value
  (Loki anchors them, as Prometheus does), and a label a stream lacks reads as ``""``;
- then any number of **line filters**, applied in order: ``|=`` contains, ``!=`` does not
  contain, ``|~`` the expression is found in the line, ``!~`` it is not;
- strings are double-quoted (with JSON's escapes, which cover Go's common ones) or in
  backticks (raw).

Anything else LogQL has (parser stages such as ``| json`` or ``| logfmt``, label filters,
``line_format``, metric queries such as ``rate(...)``) is refused with a :class:`QueryError`
that names it. Regular expressions run on RE2 (linear time, bounded memory:
:mod:`~plinth.runtime.logs.patterns`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import lark

from plinth.runtime.logs.patterns import PatternError, compile_pattern

GRAMMAR = r"""
start: selector filter*
selector: "{" matcher ("," matcher)* ","? "}"
matcher: LABEL MATCH_OP string
filter: FILTER_OP string
string: ESCAPED_STRING | RAW_STRING
MATCH_OP: "=~" | "!~" | "!=" | "="
FILTER_OP: "|=" | "|~" | "!=" | "!~"
LABEL: /[a-zA-Z_][a-zA-Z0-9_]*/
RAW_STRING: /`[^`]*`/
%import common.ESCAPED_STRING
%import common.WS
%ignore WS
"""

_PARSER = lark.Lark(GRAMMAR, parser="lalr")
#: The longest query accepted.
MAX_QUERY = 4096


_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"
_ONLY = "only the line filters |=, !=, |~ and !~ are"


class QueryError(ValueError):
    """The query is not one this service runs; the message says why (a client's 400)."""


@dataclass(frozen=True, slots=True)
class Matcher:
    label: str
    op: str
    value: str
    pattern: Any = None  # the compiled, anchored expression of =~ and !~

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.label, "")
        if self.op == "=":
            return value == self.value
        if self.op == "!=":
            return value != self.value
        found = self.pattern.fullmatch(value) is not None
        return found if self.op == "=~" else not found


@dataclass(frozen=True, slots=True)
class LineFilter:
    op: str
    value: str
    pattern: Any = None

    def keeps(self, line: str) -> bool:
        if self.op == "|=":
            return self.value in line
        if self.op == "!=":
            return self.value not in line
        found = self.pattern.search(line) is not None
        return found if self.op == "|~" else not found


@dataclass(frozen=True, slots=True)
class LogQuery:
    """A parsed query: its stream selector and line filters."""

    matchers: tuple[Matcher, ...]
    filters: tuple[LineFilter, ...]

    def selects(self, labels: Mapping[str, str]) -> bool:
        return all(m.matches(labels) for m in self.matchers)

    def line_test(self) -> Callable[[str], bool] | None:
        """A test of a line against every filter, ``None`` when there is none."""
        filters = self.filters
        if not filters:
            return None
        return lambda line: all(f.keeps(line) for f in filters)


def _string(token: lark.Token) -> str:
    text = str(token)
    if text.startswith("`"):
        return text[1:-1]
    try:
        return str(json.loads(text))
    except ValueError as exc:
        raise QueryError(f"invalid string {text}: {exc}") from exc


def _regex(source: str, anchored: bool) -> Any:
    try:
        return compile_pattern(source, anchored=anchored)
    except PatternError as exc:
        raise QueryError(f"invalid regular expression {json.dumps(source)}: {exc}") from exc


def _unsupported(query: str, exc: lark.exceptions.UnexpectedInput) -> str:
    """What the query asks that is not supported (or where it is malformed), for the message."""
    head = query.strip()
    if not head.startswith("{"):
        if "(" in head:
            words = head.split("(", 1)[0].split()
            what = f"{words[0]}(...)" if words else "(...)"
            return f"metric queries ({what}) are not supported: only stream selectors and line filters are"
        return 'a query must start with a stream selector such as {workload="web"}'
    token = getattr(exc, "token", None)
    if isinstance(exc, lark.exceptions.UnexpectedEOF) or (token is not None and token.type == "$END"):
        return "the query ends too early (a stream selector ends with '}', a filter needs a string)"
    pos = exc.pos_in_stream if isinstance(exc.pos_in_stream, int) and exc.pos_in_stream >= 0 else len(query)
    rest = query[pos:].strip()
    if head.startswith("{") and head[1:].lstrip().startswith("}"):
        return 'a stream selector needs at least one matcher, such as {workload="web"}'
    if rest.startswith("|") and not rest.startswith(("|=", "|~")):
        stage = rest[1:].strip()
        name = stage[: len(stage) - len(stage.lstrip(_NAME_CHARS))]
        if name and stage[len(name) :].lstrip()[:1] in ("=", "!", "<", ">"):
            return f"label filters ('| {stage[:40]}') are not supported: {_ONLY}"
        return f"the pipeline stage '| {name or stage[:20]}' is not supported: {_ONLY}"
    return f"syntax error at column {exc.column}: unexpected {rest[:20]!r}"


def parse(query: str) -> LogQuery:
    """The query parsed and its expressions compiled; :class:`QueryError` saying what is wrong."""
    if len(query) > MAX_QUERY:
        raise QueryError(f"a query may have at most {MAX_QUERY} characters")
    try:
        tree = _PARSER.parse(query)
    except lark.exceptions.UnexpectedInput as exc:
        raise QueryError(_unsupported(query, exc)) from None
    selector, *filter_trees = tree.children
    node: Any
    matchers = []
    for node in selector.children:  # type: ignore[union-attr]
        label, op, string = node.children
        value = _string(string.children[0])
        pattern = _regex(value, anchored=True) if op in ("=~", "!~") else None
        matchers.append(Matcher(str(label), str(op), value, pattern))
    filters = []
    for node in filter_trees:
        op, string = node.children
        value = _string(string.children[0])
        filters.append(LineFilter(str(op), value, _regex(value, anchored=False) if op in ("|~", "!~") else None))
    if all(m.matches({}) for m in matchers):
        # Loki's own rule: a selector must narrow the streams down, or it would read them all.
        raise QueryError(
            "a stream selector needs at least one matcher that does not match an empty value "
            '(workload=~".*" matches every stream, workload=~".+" does not)'
        )
    return LogQuery(tuple(matchers), tuple(filters))
