"""The pieces every Terraform resource body is built from (TF docs/resources).

Kept apart from ``terraform`` so that per-kind modules (``terraform_workload``) can use them
while ``terraform`` imports those modules to fill its kind table, without an import cycle.
"""

from __future__ import annotations

import json
import re
from typing import Any

from plinth.convert.hcl import Attribute, Block

Body = list[Attribute | Block]


def snake(name: str) -> str:
    """``scaleToZeroDelay`` -> ``scale_to_zero_delay``; a run of capitals stays one word
    (``inboundAllowCIDR`` -> ``inbound_allow_cidr``, but ``capacityAIUpdateMinutes`` needs a name of its own)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def tag_strings(tags: Any) -> dict[str, str]:
    """The provider's ``tags`` map: string values; other JSON values as their JSON text."""
    if not isinstance(tags, dict):
        return {}
    # A null tag means "no tag" on the wire (PATCH with null removes it), so it is left out.
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in tags.items() if v is not None}


def generic(obj: Any, block_names: dict[str, str] | None = None, skip: tuple[str, ...] = ()) -> Body:
    """Attributes for scalars and lists of scalars, nested blocks for objects and lists of objects."""
    body: Body = []
    renamed = block_names or {}
    for key, value in (obj or {}).items():
        if key in skip or value is None:
            continue
        name = renamed.get(key, snake(key))
        if isinstance(value, dict):
            body.append(Block(name, generic(value, renamed)))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            body.extend(Block(name, generic(v, renamed)) for v in value)
        else:
            body.append(Attribute(name, value))
    return body


def common(item: dict[str, Any]) -> Body:
    """``name``, ``description`` (when set) and ``tags``: the head of every resource."""
    body: Body = [Attribute("name", item.get("name", ""))]
    if item.get("description") is not None:
        body.append(Attribute("description", item["description"]))
    body.append(Attribute("tags", tag_strings(item.get("tags"))))
    return body


def gvc_of(item: dict[str, Any]) -> str | None:
    """The GVC name of a GVC-scoped item: its ``gvc`` field, else the last segment of its ``gvc`` link."""
    if isinstance(item.get("gvc"), str) and item["gvc"]:
        return str(item["gvc"])
    for link in item.get("links") or []:
        if isinstance(link, dict) and link.get("rel") == "gvc":
            return str(link.get("href", "")).rsplit("/", 1)[-1]
    return None
