"""``json``, ``yaml``, ``json-slim`` and ``yaml-slim``: the document with the CLI's key order.

Slim drops the server-owned fields listed in ``plinth.meta.SLIM_DROPPED`` from each top-level
item (each element of a list's ``items``, or of a bare array) and the
``cpln/deployTimestamp`` tag; nested objects are not touched (docs/cli.md, Output formats).
"""

from __future__ import annotations

import copy
from typing import Any

from plinth.cli.output.base import FunctionFormatter, RenderContext, register
from plinth.cli.output.color import colorize_json, colorize_yaml
from plinth.cli.output.keyorder import sort_deep
from plinth.client.jsvalues import stringify
from plinth.meta import SLIM_DROPPED

DEPLOY_TIMESTAMP_TAG = "cpln/deployTimestamp"


def slim(doc: Any) -> Any:
    """A copy of ``doc`` without server-owned fields, following the official CLI's rules."""
    doc = copy.deepcopy(doc)
    _slim_in_place(doc)
    return doc


def _slim_in_place(doc: Any) -> None:
    if isinstance(doc, list):
        for item in doc:
            _slim_in_place(item)
    elif isinstance(doc, dict) and doc.get("kind") == "list":
        doc.pop("links", None)
        for item in doc.get("items") or []:
            _slim_in_place(item)
    elif isinstance(doc, dict):
        for key in SLIM_DROPPED:
            doc.pop(key, None)
        if isinstance(doc.get("tags"), dict):
            doc["tags"].pop(DEPLOY_TIMESTAMP_TAG, None)


def to_json(doc: Any, ctx: RenderContext) -> str:
    text = stringify(sort_deep(doc), indent=2)
    return colorize_json(text) + "\n" if ctx.color else text


def to_yaml(doc: Any, ctx: RenderContext) -> str:
    from plinth.cli.output import jsyaml

    text = jsyaml.dump(sort_deep(doc))
    return colorize_yaml(text) if ctx.color else text


def to_yaml_documents(items: list[Any], ctx: RenderContext) -> str:
    """Each item as its own YAML document, joined with ``---`` (the crd form of a list)."""
    from plinth.cli.output import jsyaml

    text = "---\n".join(jsyaml.dump(sort_deep(item)) for item in items)
    return colorize_yaml(text) if ctx.color else text


register(FunctionFormatter("json", to_json))
register(FunctionFormatter("yaml", to_yaml))
register(FunctionFormatter("json-slim", lambda doc, ctx: to_json(slim(doc), ctx)))
register(FunctionFormatter("yaml-slim", lambda doc, ctx: to_yaml(slim(doc), ctx)))
