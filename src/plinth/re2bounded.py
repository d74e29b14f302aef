"""Regular expressions in RE2, bounded: the one way Plinth compiles a pattern a client sent.

Python's ``re`` backtracks (``(a*)*b`` against forty ``a`` runs longer than anyone waits) and
runs on a worker's event loop. RE2 (``google-re2``, the engine of Go) matches in time linear in
the text, refuses what needs backtracking (back-references, look-arounds), and bounds the memory
a pattern compiles to: :data:`MAX_MEMORY` here (RE2's own default is 8 MiB). A pattern is at
most ``QUERY_PATTERN_MAX`` characters (``meta.py``). The API's ``~`` query terms
(``storage/regex.py``, which adds the rules both stores share) and LogQL's matchers
(``runtime/logs/patterns.py``) compile through :func:`compiler`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import re2

from plinth.meta import QUERY_PATTERN_MAX

#: Memory one compiled pattern may take: a pattern over it is refused.
MAX_MEMORY = 1 << 20


class PatternError(ValueError):
    """A pattern refused; the message says why, for a client."""


def compiler(*, dot_nl: bool, cached: int) -> Callable[[str], Any]:
    """A compile function with these RE2 options, keeping ``cached`` patterns (the same query
    is usually run page after page, refusals too): it returns the compiled pattern, or raises
    :class:`PatternError` when the pattern is too long or RE2 refuses it."""
    options = re2.Options()
    options.max_mem = MAX_MEMORY
    options.dot_nl = dot_nl
    options.log_errors = False  # a refused pattern is the client's 400, not a line on stderr

    @functools.lru_cache(maxsize=cached)
    def attempt(pattern: str) -> Any:
        try:
            return re2.compile(pattern, options)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            return f"not a valid regular expression: {reason}"

    def compile_bounded(pattern: str) -> Any:
        if len(pattern) > QUERY_PATTERN_MAX:
            raise PatternError(f"a regular expression may have at most {QUERY_PATTERN_MAX} characters")
        compiled = attempt(pattern)
        if isinstance(compiled, str):
            raise PatternError(compiled)
        return compiled

    return compile_bounded
