"""The limits a request must keep before the engine sees it (docs/api.md, "Limits").

- The body: at most ``Settings.max_body_bytes`` (1 MiB) -> 413 (``http.read_body``).
- JSON nesting: at most :data:`MAX_JSON_DEPTH` levels of arrays and objects -> 400. orjson
  itself allows 1024, deeper than Python's recursion in the engine (PATCH merges, validation)
  can safely follow, and deeper than any item of the API needs.
- Arrays: at most :data:`MAX_ARRAY_ITEMS` entries each -> 400 naming every longer array by its
  path. Checked before authorization and before any kind looks at the body, so the work a
  request can cause is bounded by its size whoever sends it; the kinds' own, smaller bounds
  (50 tags, 8 containers, ...) are judged after, with the item's other rules.
- The body must be UTF-8 (RFC 8259) -> 400 naming the first bad byte.
- No string may hold U+0000 (NUL) -> 400: PostgreSQL cannot store it in text or jsonb, so it is
  refused on both backends alike (and anywhere in a path: 404, ``engine/requestinfo.py``).
- The request line and headers together: at most :data:`MAX_HEADER_BYTES` -> 431 (enforced by
  the connection guard, ``server/protocol.py``).

:func:`json_too_deep` runs on every JSON body, so its common case is two ``bytes.count`` calls:
a body with at most ``limit`` opening brackets cannot nest deeper than ``limit``. Other bodies
pay for a few passes of ``bytes`` methods at C speed (less than decoding the body costs): drop
escapes, keep what lies outside strings, keep only the brackets, then remove innermost ``[]``
pairs once per level.
"""

from __future__ import annotations

import re
from typing import Any

from plinth.errors import FieldError

MAX_JSON_DEPTH = 64
MAX_ARRAY_ITEMS = 1000
MAX_HEADER_BYTES = 32 * 1024

_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _openings(raw: bytes) -> int:
    return raw.count(b"[") + raw.count(b"{")


def json_too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects more than ``limit`` levels deep.

    Brackets inside strings do not count. For text that is not valid JSON the answer may be
    either; the decoder rejects such text anyway.
    """
    if _openings(raw) <= limit:
        return False
    # Escapes only occur inside strings: without them, every '"' opens or closes one.
    outside = b"".join(raw.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    if _openings(outside) <= limit:
        return False
    structure = outside.translate(_SQUARE, _NOT_BRACKETS)
    for _ in range(limit):
        # Each pass removes every innermost pair: one level of nesting.
        shorter = structure.replace(b"[]", b"")
        if not shorter or shorter == structure:
            return False  # all levels gone, or unbalanced (not JSON: the decoder says so)
        structure = shorter
    return True


# A NUL can only reach a JSON string escaped (a raw control character is not JSON): "\u0000"
# preceded by an even number of backslashes (an odd number escapes the escape itself).
_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def has_nul(raw: bytes) -> bool:
    """Whether the JSON text ``raw`` holds a string with U+0000; one ``bytes`` search when not."""
    return b"\\u0000" in raw and _NUL_ESCAPE.search(raw) is not None


def utf8_error(raw: bytes) -> str | None:
    """Where ``raw`` stops being UTF-8, as a message; ``None`` when it is valid."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte {exc.start} ({raw[exc.start : exc.start + 1]!r}) is not valid UTF-8"
    return None


def long_arrays(raw: bytes, value: Any, limit: int = MAX_ARRAY_ITEMS) -> list[FieldError]:
    """One error per array of the decoded body ``value`` (``raw`` its JSON text) holding more
    than ``limit`` entries, at its path (``spec.env``; ``(body)`` for the body itself).

    An array of ``n`` entries needs ``n - 1`` commas, so a body with fewer commas than ``limit``
    is not walked at all; others are walked once, without recursion (the depth is bounded, but
    a walk costs no stack either way).
    """
    if raw.count(b",") < limit:
        return []
    errors: list[FieldError] = []
    todo: list[tuple[str, Any]] = [("", value)]
    while todo:
        path, node = todo.pop()
        if isinstance(node, dict):
            todo += ((f"{path}.{k}" if path else k, v) for k, v in node.items())
        elif isinstance(node, list):
            if len(node) > limit:
                errors.append(FieldError(path or "(body)", f"must have at most {limit} entries, not {len(node)}"))
                continue  # its entries are not judged: the array is refused as a whole
            todo += ((f"{path}[{i}]", v) for i, v in enumerate(node) if isinstance(v, dict | list))
    return sorted(errors, key=lambda e: e.path)
