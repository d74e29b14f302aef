"""References between items: checking the links an item holds, and refreshing dependants.

An item's status may depend on other items (a domain's on its GVC, a volume set's on its
parent GVC). Kinds say so in their status dependencies (``ReadsLinked``, read through
``dependencies.py``); when an item changes, the engine recomputes the status of the items that
depend on it, in the same transaction as the change.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import orjson

from plinth.engine.address import Address
from plinth.engine.dependencies import dependants_of
from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, KindSpec, Reference
from plinth.meta import parse_link
from plinth.storage.base import Key, Put, Record, Storage
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

#: How many children a delete guard names before saying "and more".
GUARD_NAMES = 20

#: Completes a status context for a kind (``StatusInputs.context``): kind, base, item, href.
Contextualise = Callable[[KindSpec, KindContext, Item, str], Awaitable[KindContext]]


def _key_of_link(kinds: Mapping[str, KindSpec], org: str, target_kind: str, name: str, gvc: str | None) -> Key | None:
    spec = kinds.get(target_kind)
    if spec is None:
        return None
    return Address(spec, org, gvc, name).key


async def check_references(
    storage: Storage,
    kinds: Mapping[str, KindSpec],
    org: str,
    refs: list[Reference],
    overrides: Mapping[str, Item | None],
) -> tuple[list[FieldError], dict[str, Item | None], list[str]]:
    """Validate every reference; returns (errors, resolved items by href, normalised hrefs)."""
    errors: list[FieldError] = []
    resolved: dict[str, Item | None] = {}
    hrefs: list[str] = []
    for ref in refs:
        link = parse_link(ref.link, org)
        if link is None:
            errors.append(FieldError(ref.path, f"must be a link such as /org/{org}/<kind>/<name> or //<kind>/<name>"))
            continue
        if link.org != org:
            errors.append(FieldError(ref.path, f"must link to an item of org '{org}'"))
            continue
        if ref.kinds is not None and link.kind not in ref.kinds:
            errors.append(FieldError(ref.path, f"must link to a {' or '.join(sorted(ref.kinds))}"))
            continue
        href = link.href
        hrefs.append(href)
        if href in overrides:
            resolved[href] = overrides[href]
        elif href not in resolved:
            key = _key_of_link(kinds, org, link.kind, link.name, link.gvc)
            record = await storage.get(key) if key is not None else None
            resolved[href] = orjson.loads(record.doc) if record is not None else None
        if ref.must_exist and resolved.get(href) is None:
            errors.append(FieldError(ref.path, f"{link.kind} '{link.name}' does not exist"))
    return errors, resolved, hrefs


async def refresh_dependants(
    storage: Storage,
    kinds: Mapping[str, KindSpec],
    changed_kind: KindSpec,
    org: str,
    href: str,
    name: str,
    changed: Item | None,
    now: str,
    contextualise: Contextualise,
    only: Callable[[KindSpec, Item], bool] | None = None,
) -> list[Put]:
    """Status-only rewrites (same version) of the items whose status depends on ``href``;
    with ``only``, of those of them it accepts (the others' status cannot have changed)."""
    ops: list[Put] = []
    overrides = {href: changed}
    linking = dependants_of(kinds, changed_kind.name).linking
    # One statement for every linking kind (a workload has two): this runs before and after
    # each write of the changed item.
    by_kind: dict[str, list[Record]] = {}
    for found in await storage.referrers(org, href, [k.name for k in linking]):
        by_kind.setdefault(found.key.kind, []).append(found)
    for dep_kind in linking:
        records = by_kind.get(dep_kind.name, [])
        inside_changed = dep_kind.scope == changed_kind.name
        if inside_changed:
            records += await _children(storage, org, dep_kind.name, name)
        for record in records:
            item = orjson.loads(record.doc)
            if only is not None and not only(dep_kind, item):
                continue
            parent = changed if inside_changed else None
            refs = dep_kind.rules.references(item, org)
            _, resolved, hrefs = await check_references(storage, kinds, org, refs, overrides)
            if dep_kind.scope == "gvc" and parent is None and item.get("gvc"):
                gvc_record = await storage.get(Address(kinds[dep_kind.scope], org, None, item["gvc"]).key)
                parent = orjson.loads(gvc_record.doc) if gvc_record is not None else None
            ctx = KindContext(org=org, now=now, gvc=item.get("gvc"), parent=parent, resolved=resolved, id=item["id"])
            item_href = Address.stored(dep_kind, record.key).href
            ctx = await contextualise(dep_kind, ctx, item, item_href)
            status = dep_kind.status.compute(item, ctx)
            if status != item.get("status"):
                item["status"] = status
                new = replace(record, doc=orjson.dumps(item))
                ops.append(Put(new, expected_version=record.version, refs=tuple(hrefs)))
    return ops


async def _children(storage: Storage, org: str, kind: str, gvc: str) -> list[Record]:
    return await every_record(storage, ListRequest(org, kind, gvc, limit=500))


async def child_names(
    storage: Storage, kinds: Mapping[str, KindSpec], container: str, org: str, name: str
) -> list[str]:
    """``kind/name`` of the items inside a container (for the delete guard), at most GUARD_NAMES + 1."""
    names: list[str] = []
    for kind in kinds.values():
        if kind.scope != container:
            continue
        page = await storage.list_page(ListRequest(org, kind.name, name, limit=GUARD_NAMES + 1))
        names += [f"{kind.name}/{r.key.name}" for r in page]
    return names


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def set_at_path(item: Item, path: str, value: Any) -> None:
    """Set ``value`` at a JSON path such as ``spec.ports[0].routes[1].workloadLink``."""
    parts: list[str | int] = [int(idx) if idx else name for name, idx in _PATH_PART.findall(path)]
    node: Any = item
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def normalise_links(item: Item, refs: list[Reference], org: str) -> None:
    """Store every reference in its full ``/org/...`` form, as the official API returns them
    (except where ``rewrite`` is off: the field holds a URI that names the item)."""
    for ref in refs:
        link = parse_link(ref.link, org)
        if ref.rewrite and link is not None and _get_at_path(item, ref.path) != link.href:
            set_at_path(item, ref.path, link.href)


def _get_at_path(item: Item, path: str) -> Any:
    node: Any = item
    for name, idx in _PATH_PART.findall(path):
        node = node[int(idx)] if idx else node[name]
    return node
