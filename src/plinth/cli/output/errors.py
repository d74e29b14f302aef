"""How a failed request is shown on standard error, per ``-o`` (docs/cli.md, Output formats).

The printed object E is the server's error body when it has a ``status``, else
``{status, message}``, or ``{code, message}`` when no answer came. It is wrapped in a
one-element array and rendered:

- json (also the default when no ``-o`` was given), yaml, json-slim, yaml-slim: sorted, as usual;
- text, tf, crd: the JSON in the server's key order (the official CLI's table fallback);
- names: the official CLI prints nothing and exits 0; Plinth prints the json form and exits 1.

The caller writes the result followed by two newlines (``main``).
"""

from __future__ import annotations

from typing import Any

from plinth.cli.output.base import RenderContext
from plinth.cli.output.structured import slim, to_json, to_yaml
from plinth.client.jsvalues import stringify


def render_error(error_object: Any, output: str | None, ctx: RenderContext) -> str:
    wrapped = [error_object]
    if output in (None, "json", "names"):
        return to_json(wrapped, ctx)
    if output == "yaml":
        return to_yaml(wrapped, ctx)
    if output == "json-slim":
        return to_json(slim(wrapped), ctx)
    if output == "yaml-slim":
        return to_yaml(slim(wrapped), ctx)
    return stringify(wrapped, indent=2) + "\n"
