"""The regular expressions of ``~`` and ``=~`` query terms: RE2, in time linear in the text.

Python's ``re`` backtracks: ``(a*)*b`` against forty ``a`` runs for longer than anyone waits,
and a SQLite store and every watch evaluate terms in Python, on the worker's event loop. RE2
(``google-re2``, the engine of Go and of Google's services) matches in time linear in the text
and bounds the memory a pattern compiles to; it refuses what needs backtracking
(back-references, look-arounds). Repetition counts are at most 255 (PostgreSQL's own bound;
RE2's is 1,000), so a pattern one store runs the other runs too.

Both stores accept exactly the patterns :func:`compile_pattern` accepts (the engine checks every
query with it before a store sees it): PostgreSQL then runs its own engine on them, which is not
backtracking-free in general but is on this syntax, and within the per-query time bound of
``postgres.py``. A pattern is at most ``QUERY_PATTERN_MAX`` characters (``meta.py``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

from plinth.meta import QUERY_PATTERN_MAX

#: Memory one compiled pattern may take (RE2's own default is 8 MiB): a pattern over it is refused.
MAX_MEMORY = 1 << 20
#: Compiled patterns kept per process (the same query is usually run page after page).
CACHED = 512
#: The largest count of a ``{m,n}`` repetition (PostgreSQL's ``DUPMAX``).
MAX_REPEAT = 255
#: A counted repetition (RE2 has accepted the pattern's syntax; a literal brace with a count
#: over the bound inside a bracket expression is refused too, which errs on the safe side).
_COUNT = re.compile(r"(?<!\\)\{(\d+)(?:,(\d*))?\}")


class PatternError(ValueError):
    """A pattern no store runs; the message says why, for a client."""


def _options() -> Any:
    options = re2.Options()
    options.max_mem = MAX_MEMORY
    options.dot_nl = True  # as PostgreSQL's '.' (which matches a newline unless told otherwise)
    options.log_errors = False  # a refused pattern is the client's 400, not a line on stderr
    return options


_OPTIONS = _options()


@functools.lru_cache(maxsize=CACHED)
def _compiled(pattern: str) -> Any:
    """The compiled pattern, or why RE2 refuses it (a string: refusals are cached too)."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return f"not a valid regular expression: {reason}"


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern; :class:`PatternError` when it is too long or RE2 refuses it."""
    if len(pattern) > QUERY_PATTERN_MAX:
        raise PatternError(f"a regular expression may have at most {QUERY_PATTERN_MAX} characters")
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        raise PatternError(compiled)
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
