"""JavaScript's renderings of JSON values, so that output matches the official CLI byte for byte.

The official CLI runs on Node: it parses every response with ``JSON.parse`` and prints with
``JSON.stringify`` or js-yaml. Three JavaScript habits show in its output and are reproduced
here: numbers are IEEE doubles printed by ``Number.prototype.toString``; integer-like object keys
("0", "42") come before all other keys, in numeric order, whatever the source order was; and
object keys are always strings.
"""

from __future__ import annotations

import json
import math
from typing import Any

_MAX_ARRAY_INDEX = 2**32 - 2


def is_array_index(key: str) -> bool:
    """True for keys that a JavaScript object keeps in front, in numeric order."""
    if not key or not key.isascii() or not key.isdigit():
        return False
    if len(key) > 1 and key[0] == "0":
        return False
    return int(key) <= _MAX_ARRAY_INDEX


def js_key_order(keys: list[str]) -> list[str]:
    """The order ``Object.keys`` reports for keys inserted in ``keys`` order."""
    indexes = sorted((k for k in keys if is_array_index(k)), key=int)
    return indexes + [k for k in keys if not is_array_index(k)]


def js_number(value: int | float) -> str:
    """``Number.prototype.toString()`` for a JSON number (ints beyond 2**53 lose precision, as in JS)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    as_float = float(value)
    if math.isnan(as_float):
        return "NaN"
    if math.isinf(as_float):
        return "Infinity" if as_float > 0 else "-Infinity"
    if as_float == 0:
        return "0"
    if isinstance(value, int) and abs(value) < 2**53:
        return str(value)
    return _float_to_js(as_float)


def _float_to_js(value: float) -> str:
    # repr() gives the shortest round-trip digits, as JS does; only the layout rules differ.
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value))
    n = exponent  # the decimal point sits after n digits
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest_digits(value: float) -> tuple[str, int]:
    text = repr(value)
    if "e" in text:
        mantissa, exp_text = text.split("e")
        exp = int(exp_text)
    else:
        mantissa, exp = text, 0
    if "." in mantissa:
        whole, frac = mantissa.split(".")
    else:
        whole, frac = mantissa, ""
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    leading_zeros = len(whole + frac) - len((whole + frac).lstrip("0"))
    point = len(whole) + exp - leading_zeros
    digits = digits.rstrip("0") or "0"
    return digits, point


def js_string(value: Any) -> str:
    """``String(value)`` for the scalars a YAML or JSON document can hold."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    return str(value)


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: empty arrays and objects are true, ``""``, ``0`` and ``null`` false."""
    if isinstance(value, list | dict):
        return True
    return bool(value)


def parse_json(text: str) -> Any:
    """``JSON.parse``: floats that are whole numbers become ints, as JS cannot tell them apart."""
    return json.loads(text, parse_float=_parse_js_float, parse_constant=_reject_constant)


def _parse_js_float(text: str) -> int | float:
    value = float(text)
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name[0]} in JSON")


def stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, undefined, indent)`` with JavaScript key order and number text."""
    parts: list[str] = []
    _write(value, indent, 0, parts)
    return "".join(parts)


def _write(value: Any, indent: int | None, depth: int, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float):
        number = js_number(value)
        out.append("null" if number in ("NaN", "Infinity", "-Infinity") else number)
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, dict):
        keys = js_key_order([str(k) for k in value])
        by_text = {str(k): v for k, v in value.items()}
        if not keys:
            out.append("{}")
            return
        out.append("{")
        for position, key in enumerate(keys):
            if position:
                out.append(",")
            _newline(indent, depth + 1, out)
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(": " if indent is not None else ":")
            _write(by_text[key], indent, depth + 1, out)
        _newline(indent, depth, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        out.append("[")
        for position, item in enumerate(value):
            if position:
                out.append(",")
            _newline(indent, depth + 1, out)
            _write(item, indent, depth + 1, out)
        _newline(indent, depth, out)
        out.append("]")
    else:
        out.append(json.dumps(str(value), ensure_ascii=False))


def _newline(indent: int | None, depth: int, out: list[str]) -> None:
    if indent is not None:
        out.append("\n" + " " * (indent * depth))
