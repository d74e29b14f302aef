"""The regular expressions of LogQL queries (``=~``, ``!~``, ``|~``): RE2 through
``plinth.re2bounded``, with the bounds the API puts on its own ``~`` query terms (time linear in
the text, length and compiled memory bounded). The syntax is RE2's, which is Go's, which is what
LogQL specifies.
"""

from __future__ import annotations

from typing import Any

from plinth.re2bounded import PatternError, compiler

__all__ = ["PatternError", "compile_pattern"]

_compile = compiler(dot_nl=False, cached=256)


def compile_pattern(pattern: str, anchored: bool) -> Any:
    """The compiled pattern (``anchored``: it must match the whole text, as Loki's label
    matchers do); :class:`PatternError` when it is too long or RE2 refuses it."""
    compiled = _compile(pattern)
    return _compile(f"^(?:{pattern})$") if anchored else compiled
