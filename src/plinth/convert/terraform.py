"""API items -> Terraform for the official provider's resources (api.md §7).

``to_terraform(item_or_list) -> str``: one ``resource`` block per item, valid HCL. Kinds:
``cpln_org`` (its settings), ``cpln_gvc``, ``cpln_domain`` and ``cpln_volume_set``. Server-owned
fields (id, version, status, links...) are left out: Terraform computes them. Tag values are
strings in the provider's schema, so other JSON values are written as their JSON text. Kinds
without a mapping raise ``ValueError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from plinth.convert.hcl import Attribute, Block, label, render

Body = list[Attribute | Block]


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def tag_strings(tags: Any) -> dict[str, str]:
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
    body: Body = [Attribute("name", item.get("name", ""))]
    if item.get("description") is not None:
        body.append(Attribute("description", item["description"]))
    body.append(Attribute("tags", tag_strings(item.get("tags"))))
    return body


def domain(item: dict[str, Any]) -> Body:
    spec = dict(item.get("spec") or {})
    ports = spec.pop("ports", None) or []
    spec_body = generic(spec)
    port_blocks = [Block("ports", generic(port, {"routes": "route", "canaries": "canary"})) for port in ports]
    # The provider requires a spec block holding at least one (possibly empty) ports block.
    spec_body.extend(port_blocks or [Block("ports", [])])
    return [*common(item), Block("spec", spec_body)]


def volume_set(item: dict[str, Any]) -> Body:
    spec = dict(item.get("spec") or {})
    encryption = spec.pop("customEncryption", None)
    body = [*common(item), Attribute("gvc", item.get("gvc") or _gvc_from_links(item))]
    body += generic(spec)
    if isinstance(encryption, dict):
        configured = encryption.get("regions") or {}
        regions = {region: {"key_id": value.get("keyId")} for region, value in configured.items()}
        body.append(Block("custom_encryption", [Attribute("regions", regions)]))
    return body


def _gvc_from_links(item: dict[str, Any]) -> str | None:
    for link in item.get("links") or []:
        if isinstance(link, dict) and link.get("rel") == "gvc":
            return str(link.get("href", "")).rsplit("/", 1)[-1]
    return None


def gvc(item: dict[str, Any]) -> Body:
    spec = dict(item.get("spec") or {})
    placement = spec.pop("staticPlacement", None) or {}
    body = common(item)
    links = placement.get("locationLinks") or []
    body.append(Attribute("locations", [str(link).rsplit("/", 1)[-1] for link in links]))
    if spec.get("pullSecretLinks"):
        body.append(Attribute("pull_secrets", [str(link).rsplit("/", 1)[-1] for link in spec.pop("pullSecretLinks")]))
    env = spec.pop("env", None)
    if isinstance(env, list):
        body.append(Attribute("env", {str(e.get("name")): str(e.get("value", "")) for e in env if isinstance(e, dict)}))
    body += generic(spec, {"multiZone": "multi_zone"}, skip=("tracing", "sidecar", "keda"))
    return body


def org(item: dict[str, Any]) -> Body:
    spec = item.get("spec") or {}
    body: Body = [
        Attribute("description", item.get("description", "")),
        Attribute("tags", tag_strings(item.get("tags"))),
    ]
    if spec.get("sessionTimeoutSeconds") is not None:
        body.append(Attribute("session_timeout_seconds", spec["sessionTimeoutSeconds"]))
    for key in ("authConfig", "observability", "security"):
        if isinstance(spec.get(key), dict):
            body.append(Block(snake(key), generic(spec[key])))
    return body


RESOURCES: dict[str, tuple[str, Callable[[dict[str, Any]], Body]]] = {
    "org": ("cpln_org", org),
    "gvc": ("cpln_gvc", gvc),
    "domain": ("cpln_domain", domain),
    "volumeset": ("cpln_volume_set", volume_set),
}


def to_terraform(item_or_list: dict[str, Any]) -> str:
    """HCL for an item or a ``{kind: list, items}``; ends with a newline."""
    items = item_or_list.get("items") if item_or_list.get("kind") in ("list", "queryresult") else [item_or_list]
    blocks: Body = []
    for item in items or []:
        kind = item.get("kind")
        if kind not in RESOURCES:
            raise ValueError(f"no Terraform resource for kind {kind!r}")
        resource, build = RESOURCES[kind]
        blocks.append(Block("resource", build(item), (resource, label(str(item.get("name", kind))))))
    return render(blocks) + "\n" if blocks else ""
