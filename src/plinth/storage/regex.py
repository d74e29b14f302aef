"""The regular expressions of ``~`` and ``=~`` query terms: RE2, in time linear in the text.

A SQLite store and every watch evaluate terms in Python, on the worker's event loop: patterns
compile through ``plinth.re2bounded`` (RE2, linear in the text, memory and length bounded),
with these rules added so that both stores read a pattern alike. Repetition counts are at most
255 (PostgreSQL's own bound; RE2's is 1,000), so a pattern one store runs the other runs too.

Both stores accept exactly the patterns :func:`compile_pattern` accepts (the engine checks every
query with it before a store sees it): PostgreSQL then runs its own engine on them, which is not
backtracking-free in general but is on this syntax, and within the per-query time bound of
``postgres.py``. A pattern is at most ``QUERY_PATTERN_MAX`` characters (``meta.py``).
"""

from __future__ import annotations

import re
from typing import Any

from plinth.re2bounded import PatternError, compiler

__all__ = ["PatternError", "compile_pattern", "search"]

#: Compiled patterns kept per process (the same query is usually run page after page).
CACHED = 512
#: The largest count of a ``{m,n}`` repetition (PostgreSQL's ``DUPMAX``).
MAX_REPEAT = 255
#: A counted repetition (RE2 has accepted the pattern's syntax; a literal brace with a count
#: over the bound inside a bracket expression is refused too, which errs on the safe side).
_COUNT = re.compile(r"(?<!\\)\{(\d+)(?:,(\d*))?\}")
#: ``.`` matches a newline, as PostgreSQL's does unless told otherwise.
_compile = compiler(dot_nl=True, cached=CACHED)


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern; :class:`PatternError` when it is too long, RE2 refuses it, or
    the stores would read it differently."""
    compiled = _compile(pattern)
    for low, high in _COUNT.findall(pattern):
        if int(low) > MAX_REPEAT or (high and int(high) > MAX_REPEAT):
            raise PatternError(f"a repetition count may be at most {MAX_REPEAT}")
    _common_syntax(pattern)
    return compiled


#: Escapes that mean the same to RE2 and to PostgreSQL: control characters, the class
#: shorthands and the start of the text (a backslash before any other non-alphanumeric
#: character is that character, to both).
COMMON_ESCAPES = frozenset("afntrvdDsSwWA")


def _common_syntax(pattern: str) -> None:
    """Refuse what RE2 takes but PostgreSQL reads otherwise or not at all, so a query means
    the same on both stores: other letter and digit escapes (``\\b`` is a word boundary to
    RE2 and a backspace to PostgreSQL; ``\\z``, ``\\p{L}``, ``\\Q``, ``\\x{41}``, octal
    and back-references are one engine's only), and ``(?`` groups other than ``(?:`` and a
    leading ``(?i)`` (named groups, flag groups, other flags). Conservative: the same text
    inside a bracket expression is refused too."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e.isalnum() and e not in COMMON_ESCAPES:
                raise PatternError(f"the escape \\{e} is not supported (it differs between the stores)")
            i += 2
            continue
        plain_group = pattern.startswith("(?:", i) or (i == 0 and pattern.startswith("(?i)"))
        if c == "(" and pattern.startswith("(?", i) and not plain_group:
            raise PatternError("only (?:...) groups and a leading (?i) are supported among (?...) forms")
        i += 1


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` is found in ``text``; a pattern that cannot be compiled finds nothing
    (a stored query from before the bound, say: the engine never sends one)."""
    try:
        return compile_pattern(pattern).search(text) is not None
    except PatternError:
        return False
