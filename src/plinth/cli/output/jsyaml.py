"""A port of js-yaml 4's ``dump`` for JSON values: the official CLI's YAML, byte for byte.

PyYAML's emitter differs in many small ways (sequence indentation, quoting, folding), so
the parts of js-yaml's ``dumper.js`` that JSON data can reach are ported here: block
mappings and sequences, the scalar style choice (plain, single-quoted, literal ``|``, folded
``>`` at 80 columns, double-quoted with escapes), and the implicit-type check that makes
``'true'``, ``'0'`` or ``'2025-01-01'`` come out quoted. Keys are emitted in the order given;
callers sort them first (``keyorder.sort_deep``).

Ported from js-yaml 4 (``lib/dumper.js`` of https://github.com/nodeca/js-yaml; the official CLI
3.10.1 asks for ``js-yaml ^4.1.1``), under js-yaml's MIT licence, whose notice follows.
"""

# js-yaml's licence notice, carried with this port as the licence asks (the console's vendored
# copy of js-yaml carries the same text: plinth/console/static/vendor/js-yaml.LICENSE):
#
# (The MIT License)
#
# Copyright (C) 2011-2015 by Vitaly Puzrin
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in
# all copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
# OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
# THE SOFTWARE.

from __future__ import annotations

import re
from typing import Any

from plinth.client.jsvalues import js_number

LINE_WIDTH = 80
INDENT = 2

_DEPRECATED_BOOLEANS = frozenset(
    {
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "on",
        "On",
        "ON",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "off",
        "Off",
        "OFF",
    }
)
_BASE60 = re.compile(r"^[-+]?[0-9_]+(?::[0-9_]+)+(?:\.[0-9_]*)?$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9]+)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_DATE = re.compile(r"^([0-9][0-9][0-9][0-9])-([0-9][0-9])-([0-9][0-9])$")
_TIMESTAMP = re.compile(
    r"^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])"
    r"(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?$"
)
_ESCAPES = {
    0x00: "\\0",
    0x07: "\\a",
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0B: "\\v",
    0x0C: "\\f",
    0x0D: "\\r",
    0x1B: "\\e",
    0x22: '\\"',
    0x5C: "\\\\",
    0x85: "\\N",
    0xA0: "\\_",
    0x2028: "\\L",
    0x2029: "\\P",
}
_PLAIN, _SINGLE, _LITERAL, _FOLDED, _DOUBLE = range(1, 6)


def dump(value: Any) -> str:
    """The text ``js-yaml.dump(value, {indent: 2})`` returns, trailing newline included."""
    return _node(value, 0, block=True, compact=True, is_key=False) + "\n"


def _node(value: Any, level: int, block: bool, compact: bool, is_key: bool) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _scalar(value, level, is_key, in_block=block)
    if isinstance(value, dict):
        if block and value:
            return _block_mapping(value, level, compact)
        return _flow_mapping(value, level)
    if isinstance(value, list | tuple):
        if block and value:
            return _block_sequence(list(value), level, compact)
        return _flow_sequence(list(value), level)
    return _scalar(str(value), level, is_key, in_block=block)


def _number(value: int | float) -> str:
    text = js_number(value)
    if text == "NaN":
        return ".nan"
    if text in ("Infinity", "-Infinity"):
        return text.replace("Infinity", ".inf")
    if isinstance(value, float) and not float(value).is_integer() and re.match(r"^[-+]?[0-9]+e", text):
        return text.replace("e", ".e", 1)
    return text


def _block_mapping(mapping: dict[Any, Any], level: int, compact: bool) -> str:
    result = ""
    for key, item in mapping.items():
        pair = ""
        if not compact or result:
            pair += _next_line(level)
        key_text = _node(str(key), level + 1, block=True, compact=True, is_key=True)
        explicit = len(key_text) > 1024
        if explicit:
            pair += "?" if key_text.startswith("\n") else "? "
        pair += key_text
        if explicit:
            pair += _next_line(level)
        item_text = _node(item, level + 1, block=True, compact=explicit, is_key=False)
        pair += ":" if item_text.startswith("\n") else ": "
        result += pair + item_text
    return result or "{}"


def _block_sequence(items: list[Any], level: int, compact: bool) -> str:
    result = ""
    for item in items:
        item_text = _node(item, level + 1, block=True, compact=True, is_key=False)
        if not compact or result:
            result += _next_line(level)
        result += "-" if item_text.startswith("\n") else "- "
        result += item_text
    return result or "[]"


def _flow_mapping(mapping: dict[Any, Any], level: int) -> str:
    pairs = []
    for key, item in mapping.items():
        key_text = _node(str(key), level, block=False, compact=False, is_key=False)
        prefix = "? " if len(key_text) > 1024 else ""
        pairs.append(prefix + key_text + ": " + _node(item, level, block=False, compact=False, is_key=False))
    return "{" + ", ".join(pairs) + "}"


def _flow_sequence(items: list[Any], level: int) -> str:
    return "[" + ", ".join(_node(i, level, block=False, compact=False, is_key=False) for i in items) + "]"


def _next_line(level: int) -> str:
    return "\n" + " " * (INDENT * level)


def _scalar(text: str, level: int, is_key: bool, in_block: bool) -> str:
    if not text:
        return "''"
    if text in _DEPRECATED_BOOLEANS or _BASE60.match(text):
        return "'" + text + "'"
    indent = INDENT * max(1, level)
    width = max(min(LINE_WIDTH, 40), LINE_WIDTH - indent)
    style = _choose_style(text, is_key, width, in_block)
    if style == _PLAIN:
        return text
    if style == _SINGLE:
        return "'" + text.replace("'", "''") + "'"
    if style == _LITERAL:
        return "|" + _block_header(text) + _drop_ending_newline(_indent_string(text, indent))
    if style == _FOLDED:
        return ">" + _block_header(text) + _drop_ending_newline(_indent_string(_fold_string(text, width), indent))
    return '"' + _escape(text) + '"'


def _code_points(text: str) -> list[int]:
    return [ord(c) for c in text]


def _is_printable(c: int) -> bool:
    return (
        (0x20 <= c <= 0x7E)
        or (0xA1 <= c <= 0xD7FF and c not in (0x2028, 0x2029))
        or (0xE000 <= c <= 0xFFFD and c != 0xFEFF)
        or (0x10000 <= c <= 0x10FFFF)
    )


def _is_white(c: int | None) -> bool:
    return c in (0x20, 0x09)


def _is_ns_char_or_white(c: int) -> bool:
    return _is_printable(c) and c not in (0xFEFF, 0x0D, 0x0A)


def _is_plain_safe(c: int, prev: int | None, in_block: bool) -> bool:
    c_ns_or_white = _is_ns_char_or_white(c)
    c_ns = c_ns_or_white and not _is_white(c)
    # Flow indicators (, [ ] { }) are only unsafe outside block context.
    safe = c_ns_or_white if in_block else c_ns_or_white and c not in (0x2C, 0x5B, 0x5D, 0x7B, 0x7D)
    return (
        (safe and c != 0x23 and not (prev == 0x3A and not c_ns))
        or (prev is not None and _is_ns_char_or_white(prev) and not _is_white(prev) and c == 0x23)
        or (prev == 0x3A and c_ns)
    )


_NOT_PLAIN_FIRST = frozenset(map(ord, "-?:,[]{}#&*!|=>'\"%@`"))


def _is_plain_safe_first(c: int) -> bool:
    return _is_printable(c) and c != 0xFEFF and not _is_white(c) and c not in _NOT_PLAIN_FIRST


def _is_plain_safe_last(c: int) -> bool:
    return not _is_white(c) and c != 0x3A


def _choose_style(text: str, single_line_only: bool, width: int, in_block: bool) -> int:
    points = _code_points(text)
    plain = _is_plain_safe_first(points[0]) and _is_plain_safe_last(points[-1])
    has_line_break = False
    has_foldable_line = False
    previous_break = -1
    prev: int | None = None
    # js-yaml walks UTF-16 code units; ``position`` tracks that count for the width checks.
    position = 0
    if single_line_only:
        for c in points:
            if not _is_printable(c):
                return _DOUBLE
            plain = plain and _is_plain_safe(c, prev, in_block)
            prev = c
    else:
        for c in points:
            if c == 0x0A:
                has_line_break = True
                has_foldable_line = has_foldable_line or (
                    position - previous_break - 1 > width and _unit_at(text, previous_break + 1) != " "
                )
                previous_break = position
            elif not _is_printable(c):
                return _DOUBLE
            plain = plain and _is_plain_safe(c, prev, in_block)
            prev = c
            position += 2 if c >= 0x10000 else 1
        has_foldable_line = has_foldable_line or (
            position - previous_break - 1 > width and _unit_at(text, previous_break + 1) != " "
        )
    if not has_line_break and not has_foldable_line:
        if plain and not _is_ambiguous(text):
            return _PLAIN
        return _SINGLE
    return _FOLDED if has_foldable_line else _LITERAL


def _unit_at(text: str, utf16_index: int) -> str:
    # Only compared against " ", so a surrogate-pair mismatch cannot change the answer for ASCII.
    units = text.encode("utf-16-le")
    if utf16_index * 2 + 2 > len(units):
        return ""
    return units[utf16_index * 2 : utf16_index * 2 + 2].decode("utf-16-le", errors="replace")


def _is_ambiguous(text: str) -> bool:
    """True when the plain text would load back as null, bool, number, timestamp or merge key."""
    if text in ("~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "<<"):
        return True
    if _is_yaml_int(text):
        return True
    if _FLOAT.match(text):
        try:
            import math

            if math.isfinite(float(text.replace(".inf", "inf").replace(".Inf", "inf").replace(".INF", "inf"))):
                return True
        except ValueError:
            pass
        return bool(re.match(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", text))
    return bool(_DATE.match(text) or _TIMESTAMP.match(text))


def _is_yaml_int(text: str) -> bool:
    body = text[1:] if text[:1] in ("-", "+") else text
    if not body:
        return False
    if body == "0":
        return True
    if body[0] == "0" and len(body) > 1:
        marker, digits = body[1], body[2:]
        allowed = {"b": "01", "x": "0123456789abcdefABCDEF", "o": "01234567"}.get(marker)
        if allowed is not None:
            return bool(digits) and all(ch in allowed for ch in digits)
    return body.isascii() and body.isdigit()


def _block_header(text: str) -> str:
    indicator = str(INDENT) if re.match(r"^\n* ", text) else ""
    clip = text.endswith("\n")
    keep = clip and (text[-2:-1] == "\n" or text == "\n")
    chomp = "+" if keep else ("" if clip else "-")
    return indicator + chomp + "\n"


def _drop_ending_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def _indent_string(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line if line and line != "\n" else line for line in text.splitlines(keepends=True))


def _fold_string(text: str, width: int) -> str:
    first_break = text.find("\n")
    first_break = first_break if first_break != -1 else len(text)
    result = _fold_line(text[:first_break], width)
    prev_more_indented = text[:1] in ("\n", " ")
    for match in re.finditer(r"(\n+)([^\n]*)", text[first_break:]):
        prefix, line = match.group(1), match.group(2)
        more_indented = line[:1] == " "
        extra = "\n" if (not prev_more_indented and not more_indented and line != "") else ""
        result += prefix + extra + _fold_line(line, width)
        prev_more_indented = more_indented
    return result


def _fold_line(line: str, width: int) -> str:
    if line == "" or line[0] == " ":
        return line
    start = curr = 0
    result = ""
    for match in re.finditer(r" [^ ]", line):
        nxt = match.start()
        if nxt - start > width:
            end = curr if curr > start else nxt
            result += "\n" + line[start:end]
            start = end + 1
        curr = nxt
    result += "\n"
    if len(line) - start > width and curr > start:
        result += line[start:curr] + "\n" + line[curr + 1 :]
    else:
        result += line[start:]
    return result[1:]


def _escape(text: str) -> str:
    out = []
    for ch in text:
        c = ord(ch)
        escape = _ESCAPES.get(c)
        if escape is None and _is_printable(c):
            out.append(ch)
        elif escape is not None:
            out.append(escape)
        elif c <= 0xFF:
            out.append(f"\\x{c:02X}")
        elif c <= 0xFFFF:
            out.append(f"\\u{c:04X}")
        else:
            out.append(f"\\U{c:08X}")
    return "".join(out)
