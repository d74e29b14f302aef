"""A small HCL writer: attributes, nested blocks and maps, in the layout ``terraform fmt`` uses.

A body is a list of entries; an entry is ``Attribute(name, value)`` or ``Block(name, body)``.
Values are strings, numbers, booleans, lists of values and string-keyed maps.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True, slots=True)
class Attribute:
    name: str
    value: Any


@dataclass(frozen=True, slots=True)
class Block:
    name: str
    body: list[Attribute | Block]
    labels: tuple[str, ...] = ()


def label(name: str) -> str:
    """A resource label from an API name: ``api.example.com`` -> ``api_example_com``."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return text if re.match(r"^[A-Za-z_]", text) else "_" + text


def string(value: str) -> str:
    # JSON escapes are valid HCL escapes; template markers must be doubled to stay literal.
    return json.dumps(value, ensure_ascii=False).replace("${", "$${").replace("%{", "%%{")


def value_text(value: Any, indent: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(value_text(item, indent) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        pad = "  " * (indent + 1)
        width = max(len(_key(k)) for k in value)
        lines = [f"{pad}{_key(k).ljust(width)} = {value_text(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + "\n".join(lines) + "\n" + "  " * indent + "}"
    return string(str(value))


def _key(key: str) -> str:
    return key if _IDENTIFIER.match(key) else string(key)


def render(body: list[Attribute | Block], indent: int = 0) -> str:
    """The HCL text of ``body`` at ``indent`` levels; consecutive attributes align their ``=``."""
    lines: list[str] = []
    pad = "  " * indent
    run: list[Attribute] = []

    def flush() -> None:
        if run:
            width = max(len(a.name) for a in run)
            lines.extend(f"{pad}{a.name.ljust(width)} = {value_text(a.value, indent)}" for a in run)
            run.clear()

    for entry in body:
        if isinstance(entry, Attribute):
            run.append(entry)
            continue
        flush()
        if lines and lines[-1] != "":
            lines.append("")
        labels = "".join(f" {string(text)}" for text in entry.labels)
        inner = render(entry.body, indent + 1)
        lines.append(f"{pad}{entry.name}{labels} {{" + ("\n" + inner + "\n" + pad + "}" if inner else "}"))
    flush()
    return "\n".join(lines)
