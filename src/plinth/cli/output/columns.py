"""Per-kind table columns for ``-o text``, as the official CLI's models define them (cli.md §4).

A model is a list of :class:`Column`; each cell function receives the item and the render
context and returns a string (empty when the value is missing). A model that cannot read
a field it needs raises :class:`ModelCrash`; the official CLI crashes in the same places
(for example a gvc without ``spec``), and the ``text`` formatter turns it into its error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plinth.cli.output import timestamps
from plinth.cli.output.base import RenderContext
from plinth.client.jsvalues import js_string, js_truthy, stringify

DESCRIPTION_MAX = 40
TAG_LINE_MAX = 80

Cell = Callable[[dict[str, Any], RenderContext], Any]


class ModelCrash(Exception):
    """A model met a shape it cannot read; the message is the JavaScript TypeError's."""


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    cell: Cell
    hide_when_empty: bool = False


def truncate(text: str, limit: int) -> str:
    """lodash ``_.truncate`` with ``...``: longer texts keep ``limit - 3`` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def field(name: str) -> Cell:
    return lambda item, ctx: item.get(name)


def spec_field(name: str) -> Cell:
    def cell(item: dict[str, Any], ctx: RenderContext) -> Any:
        spec = item.get("spec")
        return spec.get(name) if isinstance(spec, dict) else None

    return cell


def description(item: dict[str, Any], ctx: RenderContext) -> str:
    value = item.get("description")
    return truncate(js_string(value), DESCRIPTION_MAX) if value else ""


def tags(item: dict[str, Any], ctx: RenderContext) -> str:
    value = item.get("tags")
    if not value or not isinstance(value, dict):
        return ""
    lines = [truncate(f"{key}={stringify(value[key])}", TAG_LINE_MAX) for key in sorted(value)]
    return "\n".join(lines)


def created(item: dict[str, Any], ctx: RenderContext) -> str:
    return timestamps.render(item.get("created"), ctx)


def link(rel: str) -> Cell:
    def cell(item: dict[str, Any], ctx: RenderContext) -> Any:
        links = item.get("links")
        if not links:
            return ""
        return _link_of(links, rel)

    return cell


def _link_of(links: Any, rel: str) -> Any:
    for entry in links if isinstance(links, list) else []:
        if isinstance(entry, dict) and entry.get("rel") == rel:
            return entry.get("href")
    return None


def gvc_locations(item: dict[str, Any], ctx: RenderContext) -> str:
    placement = (item.get("spec") or {}).get("staticPlacement") or {}
    lines = [js_string(link).split("/")[-1] for link in placement.get("locationLinks") or []]
    if js_truthy(placement.get("locationQuery")):
        lines.append("+")
    return "\n".join(lines)


def gvc_domain(item: dict[str, Any], ctx: RenderContext) -> Any:
    spec = item.get("spec")
    if spec is None:
        raise ModelCrash("Cannot read properties of undefined (reading 'domain')")
    return spec.get("domain") if isinstance(spec, dict) else None


def volumeset_gvc(item: dict[str, Any], ctx: RenderContext) -> Any:
    links = item.get("links")
    if not isinstance(links, list | dict):
        raise ModelCrash("Cannot create proxy with a non-object as target or handler")
    href = _link_of(links, "gvc")
    if href is None:
        raise ModelCrash("Cannot read properties of undefined (reading 'split')")
    parts = js_string(href).split("/")
    return parts[4] if len(parts) > 4 else None


def policy_matches(item: dict[str, Any], ctx: RenderContext) -> str:
    if item.get("target") == "all":
        return "all"
    found = [name for name, key in (("query", "targetQuery"), ("links", "targetLinks")) if js_truthy(item.get(key))]
    return ",".join(found)


def group_filter(item: dict[str, Any], ctx: RenderContext) -> str:
    found = [name for name, key in (("links", "memberLinks"), ("query", "memberQuery")) if js_truthy(item.get(key))]
    return "+".join(found)


def key_names(item: dict[str, Any], ctx: RenderContext) -> str:
    keys = item.get("keys")
    if not keys:
        return ""
    return "\n".join(js_string(key.get("name") if isinstance(key, dict) else None) for key in keys)


NAME = Column("NAME", field("name"))
DESCRIPTION = Column("DESCRIPTION", description)
TAGS = Column("TAGS", tags)
CREATED = Column("CREATED", created)
ORIGIN = Column("ORIGIN", field("origin"))

MODELS: dict[str, list[Column]] = {
    "org": [NAME, DESCRIPTION, Column("LINK", link("self")), TAGS],
    "domain": [NAME, DESCRIPTION, TAGS],
    "gvc": [
        NAME,
        DESCRIPTION,
        CREATED,
        Column("ALIAS", field("alias")),
        Column("DOMAIN", gvc_domain),
        Column("LOCATIONS", gvc_locations),
        TAGS,
    ],
    "volumeset": [
        NAME,
        DESCRIPTION,
        Column("GVC", volumeset_gvc),
        CREATED,
        Column("PERFORMANCE CLASS", spec_field("performanceClass")),
        Column("FILE SYSTEM TYPE", spec_field("fileSystemType")),
        TAGS,
    ],
    "user": [
        Column("ID", field("id")),
        Column("FULL NAME", field("name")),
        Column("EMAIL", field("email")),
        CREATED,
        Column("IDP", field("idp")),
        TAGS,
    ],
    "serviceaccount": [NAME, DESCRIPTION, CREATED, ORIGIN, Column("KEYS", key_names), TAGS],
    "policy": [
        NAME,
        DESCRIPTION,
        CREATED,
        Column("TARGET KIND", field("targetKind")),
        Column("MATCHES", policy_matches),
        ORIGIN,
        TAGS,
    ],
    "group": [NAME, DESCRIPTION, CREATED, Column("FILTER", group_filter), ORIGIN, TAGS],
    "secret": [NAME, DESCRIPTION, Column("TYPE", field("type")), CREATED, TAGS],
    "location": [
        NAME,
        DESCRIPTION,
        Column("PROVIDER", field("provider")),
        Column("ENABLED", lambda item, ctx: bool((item.get("spec") or {}).get("enabled"))),
        Column("REGION", field("region")),
        ORIGIN,
        TAGS,
    ],
}
