"""``names``: one ``name`` per line, for piping into other commands (kubectl's NamePrinter)."""

from __future__ import annotations

from typing import Any

from plinth.cli.errors import FormatError
from plinth.cli.output.base import FunctionFormatter, RenderContext, register
from plinth.client.jsvalues import js_string

MISSING_NAME = 'ERROR: Unable to format to "names", one or more objects are missing the "name" property.'


def objects_of(doc: Any) -> list[Any]:
    """The items a document holds: a bare array, a list's ``items``, or the document itself."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and doc.get("kind") == "list" and isinstance(doc.get("items"), list):
        return list(doc["items"])
    return [doc]


def to_names(doc: Any, ctx: RenderContext) -> str:
    names = []
    for item in objects_of(doc):
        if not isinstance(item, dict) or "name" not in item:
            raise FormatError(MISSING_NAME, blank_line=False)
        names.append(js_string(item["name"]))
    return "\n".join(names).strip()


register(FunctionFormatter("names", to_names))
