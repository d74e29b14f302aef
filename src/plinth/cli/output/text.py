"""``text``: a table with the kind's columns, or indented JSON when no model fits (docs/cli.md, Output formats)."""

from __future__ import annotations

from typing import Any

from plinth.cli.errors import FormatError
from plinth.cli.output import table
from plinth.cli.output.base import FunctionFormatter, RenderContext, register
from plinth.cli.output.color import colorize_json
from plinth.cli.output.columns import MODELS, ModelCrash
from plinth.client.jsvalues import js_string, stringify

TABLE_CRASH = (
    "ERROR: An issue prevented the data from being formatted into a table. Attempt the operation again with "
    "'-o json' for output in JSON format. For support, please provide the error above to the Control Plane team."
)


def table_kind(doc: Any) -> tuple[str | None, Any]:
    """The model name for ``doc`` and the rows it covers (a list's items, or the item)."""
    if not isinstance(doc, dict):
        return None, doc
    kind = doc.get("kind")
    if kind == "list":
        return doc.get("itemKind"), doc.get("items")
    if kind == "queryresult":
        query = doc.get("query")
        return (query.get("kind") if isinstance(query, dict) else None), doc.get("items")
    return kind, doc


def to_text(doc: Any, ctx: RenderContext) -> str:
    kind, rows = table_kind(doc)
    model = MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        text = stringify(doc, indent=2)
        return (colorize_json(text) if ctx.color else text) + "\n"
    items = rows if isinstance(rows, list) else [rows]
    try:
        cells = [[_cell_text(column.cell(_as_object(item), ctx)) for column in model] for item in items]
    except ModelCrash as crash:
        raise _crash("TypeError", str(crash)) from crash
    visible = [
        index
        for index, column in enumerate(model)
        if not (column.hide_when_empty and all(row[index] == "" for row in cells))
    ]
    header = [model[index].title for index in visible]
    body = [[row[index] for index in visible] for row in cells]
    try:
        return table.draw([header, *body], table.NORC if ctx.color else table.RAMAC)
    except FormatError as error:
        raise _crash("Error", error.message) from error


def watch_header(kind: str) -> list[str]:
    """The columns of ``rest get --watch`` in text: the event, then the kind's (or the name)."""
    model = MODELS.get(kind)
    return ["EVENT", *([column.title for column in model] if model else ["NAME"])]


def watch_row(kind: str, event_type: str, item: Any, ctx: RenderContext) -> list[str]:
    """One change as a row under :func:`watch_header`."""
    model = MODELS.get(kind)
    obj = _as_object(item)
    if model is None:
        return [event_type, _cell_text(obj.get("name"))]
    try:
        return [event_type, *(_cell_text(column.cell(obj, ctx)) for column in model)]
    except ModelCrash as crash:
        raise _crash("TypeError", str(crash)) from crash


def _crash(error_type: str, reason: str) -> FormatError:
    # The official CLI prints the JavaScript stack, its notice, then the reason; the stack's
    # first line stands in for the whole stack here.
    return FormatError(reason, prefix=f"{error_type}: {reason}\n{TABLE_CRASH}")


def _as_object(item: Any) -> dict[str, Any]:
    if item is None:
        raise ModelCrash("Cannot read properties of null (reading 'name')")
    return item if isinstance(item, dict) else {}


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join(_cell_text(v) for v in value)
    return js_string(value)


register(FunctionFormatter("text", to_text))
