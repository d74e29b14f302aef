"""``tf`` and ``crd``: render what the terraform or k8s-crd exporter returned (docs/cli.md, Output formats).

The ``rest`` command fetches ``{exporter}{self link}`` first (``export_service`` names the
discovery key); these functions only lay the answer out:

- tf: a text body is printed as it is; a JSON body as sorted JSON;
- crd: an object as sorted YAML; ``{kind: list, items}`` as one YAML document per item,
  joined with ``---``; an array as a YAML sequence; text as a YAML block scalar.
"""

from __future__ import annotations

from typing import Any

from plinth.cli.output.base import FunctionFormatter, RenderContext, register
from plinth.cli.output.structured import to_json, to_yaml, to_yaml_documents


def render_terraform(exported: Any, ctx: RenderContext) -> str:
    if isinstance(exported, str):
        return exported
    return to_json(exported, ctx)


def render_crd(exported: Any, ctx: RenderContext) -> str:
    if isinstance(exported, dict) and exported.get("kind") == "list":
        return to_yaml_documents(list(exported.get("items") or []), ctx)
    return to_yaml(exported, ctx)


register(FunctionFormatter("tf", render_terraform, export_service="terraform-exporter"))
register(FunctionFormatter("crd", render_crd, export_service="k8s-crd-exporter"))
