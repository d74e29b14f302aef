"""The regular expressions of LogQL queries (``=~``, ``!~``, ``|~``): RE2, in time linear in the
text, with the bounds the API puts on its own ``~`` query terms (``plinth.storage.regex``, which
a runtime may not import): a pattern of at most ``QUERY_PATTERN_MAX`` characters, at most 1 MiB
of compiled program, no backtracking constructs (RE2 has none). The syntax is RE2's, which is
Go's, which is what LogQL specifies.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

from plinth.meta import QUERY_PATTERN_MAX

#: Memory one compiled pattern may take (as ``plinth.storage.regex.MAX_MEMORY``).
MAX_MEMORY = 1 << 20


class PatternError(ValueError):
    """A pattern refused; the message says why."""


def _options() -> Any:
    options = re2.Options()
    options.max_mem = MAX_MEMORY
    options.log_errors = False  # a refused pattern is the client's 400, not a line on stderr
    return options


_OPTIONS = _options()


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return f"not a valid regular expression: {reason}"


def compile_pattern(pattern: str, anchored: bool) -> Any:
    """The compiled pattern (``anchored``: it must match the whole text, as Loki's label
    matchers do); :class:`PatternError` when it is too long or RE2 refuses it."""
    if len(pattern) > QUERY_PATTERN_MAX:
        raise PatternError(f"a regular expression may have at most {QUERY_PATTERN_MAX} characters")
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        raise PatternError(compiled)
    return _compiled(f"^(?:{pattern})$") if anchored else compiled
