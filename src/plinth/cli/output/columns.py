"""Per-kind table columns for ``-o text``, as the official CLI's models define them (docs/cli.md, Output formats).

Each kind declares its column titles (``KindSpec.presentation.text_columns``, in the generated
``plinth.kindfacts``); this module says how to fill each title: the common ones alike for every
kind, a few per kind, and any other title from the top-level field it names.

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
from plinth.kindfacts import TEXT_COLUMNS

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


def key_values(name: str) -> Cell:
    """The official CLI's ``formatKVs``: one ``key=<JSON of value>`` line per key of the field,
    keys sorted, each line cut to 80 characters. Used for TAGS, and for a deployment's STATUS."""

    def cell(item: dict[str, Any], ctx: RenderContext) -> str:
        value = item.get(name)
        if not js_truthy(value):
            return ""
        if isinstance(value, dict):
            pairs = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list | str):  # Object.keys of an array or a string: its indexes
            pairs = [(str(i), v) for i, v in enumerate(value)]
        else:
            return ""
        lines = [
            truncate(f"{key}={stringify(entry)}", TAG_LINE_MAX)
            for key, entry in sorted(pairs, key=lambda pair: pair[0])
        ]
        return "\n".join(lines)

    return cell


tags = key_values("tags")


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


def gvc_of_link(item: dict[str, Any], ctx: RenderContext) -> Any:
    """The GVC column of GVC-scoped kinds (volumeset, workload): the 5th ``/`` segment of the
    ``gvc`` link, read the way the official CLI does, crashes included."""
    links = item.get("links")
    if not isinstance(links, list | dict):
        raise ModelCrash("Cannot create proxy with a non-object as target or handler")
    if isinstance(links, dict):
        raise ModelCrash("target is not iterable")
    for entry in links:
        if entry is None:
            raise ModelCrash("Cannot read properties of null (reading 'rel')")
    href = _link_of(links, "gvc")
    if href is None:
        raise ModelCrash("Cannot read properties of undefined (reading 'split')")
    if not isinstance(href, str):
        raise ModelCrash("link.split is not a function")
    parts = href.split("/")
    return parts[4] if len(parts) > 4 else None


def status_member(name: str) -> Cell:
    """``obj.status.<name>``: crashes when ``status`` is missing or null, as the official model does."""

    def cell(item: dict[str, Any], ctx: RenderContext) -> Any:
        if "status" not in item:
            raise ModelCrash(f"Cannot read properties of undefined (reading '{name}')")
        status = item["status"]
        if status is None:
            raise ModelCrash(f"Cannot read properties of null (reading '{name}')")
        return status.get(name) if isinstance(status, dict) else None

    return cell


def status_value(name: str) -> Cell:
    """``_.get(obj, 'status.<name>')``: never crashes."""

    def cell(item: dict[str, Any], ctx: RenderContext) -> Any:
        status = item.get("status")
        return status.get(name) if isinstance(status, dict) else None

    return cell


def last_modified(item: dict[str, Any], ctx: RenderContext) -> str:
    """The deployment model's MODIFIED column: ``lastModified`` rendered like CREATED."""
    return timestamps.render(item.get("lastModified"), ctx)


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


def identity_providers(item: dict[str, Any], ctx: RenderContext) -> str:
    """The official CLI's ``formatProviders``: which of aws, gcp, azure the identity holds."""
    return ",".join(name for name in ("aws", "gcp", "azure") if js_truthy(item.get(name)))


def ipset_link(item: dict[str, Any], ctx: RenderContext) -> Any:
    value = spec_field("link")(item, ctx)
    return value if js_truthy(value) else ""


def ipset_locations(item: dict[str, Any], ctx: RenderContext) -> str:
    """The official CLI's ``formatIpSetLocations``: ``<location name>,<retention>`` per line,
    crashing where it does on shapes a server never sends (entries without a string name)."""
    spec = item.get("spec")
    locations = spec.get("locations") if isinstance(spec, dict) else None
    if not js_truthy(locations):
        return ""
    if not isinstance(locations, list | str):
        raise ModelCrash("(intermediate value) is not iterable")
    lines = []
    for location in locations:
        if location is None:
            raise ModelCrash("Cannot read properties of null (reading 'name')")
        entry = location if isinstance(location, dict) else {}
        name = entry.get("name")
        if name is None:
            raise ModelCrash(
                f"Cannot read properties of {'null' if 'name' in entry else 'undefined'} (reading 'split')"
            )
        if not isinstance(name, str):
            raise ModelCrash("link.split is not a function")
        retention = js_string(entry["retentionPolicy"]) if "retentionPolicy" in entry else "undefined"
        lines.append(f"{name.split('/')[-1]},{retention}")
    return "\n".join(lines)


def provider_info(item: dict[str, Any], ctx: RenderContext) -> Any:
    """A cloud account's project id (gcp) or role ARN (aws); nothing for the others."""
    data = item.get("data")
    if not isinstance(data, dict):
        return ""
    return {"gcp": data.get("projectId"), "aws": data.get("roleArn")}.get(str(item.get("provider")), "")


def image_digest(item: dict[str, Any], ctx: RenderContext) -> str:
    value = item.get("digest")
    return truncate(js_string(value), 16) if value else ""


def camel(title: str) -> str:
    """The top-level field a title names when no cell is declared for it: ``TARGET KIND`` -> ``targetKind``."""
    first, *rest = title.lower().split()
    return first + "".join(word.capitalize() for word in rest)


#: Cells of the titles every kind fills the same way.
COMMON_CELLS: dict[str, Cell] = {
    "NAME": field("name"),
    "DESCRIPTION": description,
    "TAGS": tags,
    "CREATED": created,
    "GVC": gvc_of_link,
}
#: Cells a kind fills its own way, by (kind, title). Any other title reads the top-level field
#: it names (:func:`camel`: ``ORIGIN`` -> ``origin``, ``TARGET KIND`` -> ``targetKind``).
KIND_CELLS: dict[tuple[str, str], Cell] = {
    ("org", "LINK"): link("self"),
    ("gvc", "DOMAIN"): gvc_domain,
    ("gvc", "LOCATIONS"): gvc_locations,
    ("volumeset", "PERFORMANCE CLASS"): spec_field("performanceClass"),
    ("volumeset", "FILE SYSTEM TYPE"): spec_field("fileSystemType"),
    ("user", "FULL NAME"): field("name"),
    ("serviceaccount", "KEYS"): key_names,
    ("policy", "MATCHES"): policy_matches,
    ("group", "FILTER"): group_filter,
    ("location", "ENABLED"): lambda item, ctx: bool((item.get("spec") or {}).get("enabled")),
    # READY is ``status.readyLatest``, which the server never sends: only the typed
    # ``cpln workload get`` adds it, from the deployments. ``rest get`` does not, so the
    # column is empty for what a server returns (types-ts workload.ts).
    ("workload", "READY"): status_member("readyLatest"),
    ("workload", "ENDPOINT"): status_value("endpoint"),
    ("identity", "LOCAL NAME"): status_value("objectName"),
    ("identity", "PROVIDERS"): identity_providers,
    ("ipset", "LINK"): ipset_link,
    ("ipset", "LOCATIONS"): ipset_locations,
    ("quota", "DIMENSIONS"): key_values("dimensions"),
    # PULL is the name: the CLI prefixes the registry only in the typed ``cpln image get``.
    ("image", "PULL"): field("name"),
    ("image", "DIGEST"): image_digest,
    ("cloudaccount", "INFO"): provider_info,
}


def model(kind: str, titles: tuple[str, ...]) -> list[Column]:
    """The table of ``kind``: a column per declared title, filled by its cell."""
    return [Column(t, KIND_CELLS.get((kind, t)) or COMMON_CELLS.get(t) or field(camel(t))) for t in titles]


#: Kind -> its table: the titles each kind declares (``KindSpec.presentation.text_columns``, read from the
#: generated ``plinth.kindfacts``), and a deployment's, which is no kind.
MODELS: dict[str, list[Column]] = {kind: model(kind, titles) for kind, titles in TEXT_COLUMNS.items()} | {
    # One row per location (types-ts deployment.ts); STATUS lists every key of ``status``.
    "deployment": [
        Column("NAME/LOCATION", field("name")),
        Column("MODIFIED", last_modified),
        Column("STATUS", key_values("status")),
    ],
}
