"""The pure part of a write: from a decoded client body to a validated item, for any kind.

This is the engine's fixed order (``kinds/base.py`` documents it) without any I/O, so kinds can
be tested through exactly the code that serves them. ``service.py`` wraps it with storage.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, KindSpec
from plinth.kinds.pruning import Pruned, parse_path, prune_to_valid, render_path
from plinth.kinds.validation import check_description, check_tags, validate_model
from plinth.meta import DESCRIPTION_MAX, SERVER_OWNED

#: Top-level keys every kind accepts from a client, besides its ``top_level_model`` fields.
ENVELOPE_KEYS = frozenset({"kind", "name", "description", "tags", "spec"})


def strip_server_owned(kind: KindSpec, body: dict[str, Any]) -> dict[str, Any]:
    """Drop what the server owns, so ``get -o json`` -> edit -> ``put`` round-trips."""
    owned = SERVER_OWNED | kind.schema.server_fields
    return {k: v for k, v in body.items() if k not in owned}


def build_candidate(
    kind: KindSpec,
    body: dict[str, Any],
    old: Item | None,
    ctx: KindContext,
    name: str,
    system: Mapping[str, Any] | None = None,
) -> tuple[Item, list[FieldError]]:
    """Steps 2-5 of a write: metadata defaults, spec schema, prepare, validate, immutables.

    ``body`` is the client's object with server-owned fields already stripped and ``name``
    already decided (from the path or the body). ``system`` holds server-owned fields the
    server itself is writing (never from a client); they are set before ``prepare``. Returns the candidate item (without
    ``id``/``version``/timestamps/``links``/``status``, which the service adds) and every error.
    """
    errors: list[FieldError] = []
    allowed = set(ENVELOPE_KEYS) | (
        set(kind.schema.top_level_model.model_fields) if kind.schema.top_level_model else set()
    )
    if kind.schema.top_level_model is not None:
        allowed |= {f.alias for f in kind.schema.top_level_model.model_fields.values() if f.alias}
    if kind.scope == "gvc":
        allowed.add("gvc")
    if not kind.schema.has_description:
        allowed.discard("description")
    if not kind.schema.has_tags:
        allowed.discard("tags")
    for key in body:
        if key not in allowed:
            errors.append(FieldError(key, "unknown field"))

    if "kind" in body and body["kind"] != kind.name:
        errors.append(FieldError("kind", f"must be '{kind.name}'"))
    if "gvc" in body and kind.scope == "gvc" and not _names_path_gvc(body["gvc"], ctx):
        errors.append(FieldError("gvc", f"must be '{ctx.gvc}', the GVC in the path"))

    name_problem = kind.schema.name_rule(name)
    if name_problem:
        errors.append(FieldError("name", name_problem))

    item: Item = {"kind": kind.name, "name": name}
    if kind.scope == "gvc":
        # Stored items carry their GVC's name; so must the candidate, or a write that changes
        # nothing (``cpln apply`` of the same file again) would look like a change.
        item["gvc"] = ctx.gvc
    if kind.schema.has_description:
        description = body.get("description")
        if description is None or description == "":
            # A domain name may be longer than a description may be (253 > 250).
            description = name[:DESCRIPTION_MAX]
        errors += check_description(description)
        item["description"] = description
    if kind.schema.has_tags:
        tags = body.get("tags")
        tags = {} if tags is None else tags
        errors += check_tags(tags, (old or {}).get("tags"), allowed=kind.schema.reserved_tags)
        item["tags"] = {k: v for k, v in tags.items() if v is not None} if isinstance(tags, dict) else {}

    rules_can_run = True
    if kind.schema.top_level_model is not None:
        extras = {k: v for k, v in body.items() if k not in ENVELOPE_KEYS and k != "gvc"}
        dumped, extra_errors = validate_model(kind.schema.top_level_model, extras, "")
        errors += extra_errors
        if dumped is not None:
            item.update(dumped)
        rules_can_run = dumped is not None

    pruned: Pruned | None = None
    if kind.schema.spec_model is not None:
        if kind.schema.spec_required and body.get("spec") is None:
            errors.append(FieldError("spec", "is required"))
            rules_can_run = False
        else:
            spec, spec_errors = validate_model(kind.schema.spec_model, body.get("spec"), "spec")
            errors += spec_errors
            if spec is None:
                # Run the rules on what is valid of the spec, so the 400 names every problem.
                kept = prune_to_valid(kind.schema.spec_model, body.get("spec"), spec_errors, "spec")
                if kept is None:
                    rules_can_run = False
                else:
                    spec, pruned = kept
            if spec is not None:
                item["spec"] = spec
    elif body.get("spec") not in (None, {}):
        errors.append(FieldError("spec", "this kind has no spec"))

    # Server-owned per-kind fields (alias, origin, ...) carry over; prepare may set them on create.
    if old is not None:
        for key in kind.schema.server_fields:
            if key in old:
                item[key] = copy.deepcopy(old[key])
    # Values only the server itself may write (a built-in's origin, a service account's keys).
    for key, value in (system or {}).items():
        item[key] = copy.deepcopy(value)

    if not rules_can_run:
        return item, errors

    kind.rules.prepare(item, old, ctx)
    rule_errors = kind.rules.validate(item, old, ctx)
    if old is not None:
        rule_errors += immutable_errors(kind, item, old)
    return item, errors + _as_sent(rule_errors, pruned, errors)


def _as_sent(rule_errors: list[FieldError], pruned: Pruned | None, schema_errors: list[FieldError]) -> list[FieldError]:
    """Rule findings on a pruned spec, at the paths of the spec as sent; those about a part
    that was taken out (or already named by a schema error) are dropped."""
    if pruned is None:
        return rule_errors
    named = {e.path for e in schema_errors}
    out: list[FieldError] = []
    for error in rule_errors:
        if not error.path.startswith("spec"):
            out.append(error)
            continue
        parts = pruned.original(parse_path(error.path.removeprefix("spec")))
        if pruned.concerns_gone(parts):
            continue
        path = render_path(parts, "spec")
        if path not in named:
            out.append(FieldError(path, error.message))
    return out


def _names_path_gvc(value: Any, ctx: KindContext) -> bool:
    """Whether a body's ``gvc`` is ignored, the path deciding: the path's GVC by name or link,
    an empty object (as the vendor's own examples send it), or a string that names no GVC at
    all, such as the unreplaced template placeholder ``"$GVC"`` the cpln-py SDK sends on every
    workload create. Only a body naming *another* GVC (by name or link) is refused: that one is
    likely a document sent to the wrong place (docs/api.md, "Items and links")."""
    if value in (ctx.gvc, f"/org/{ctx.org}/gvc/{ctx.gvc}", {}):
        return True
    return isinstance(value, str) and _GVC_REFERENCE.fullmatch(value) is None


#: A string that names a GVC: a name-like word, ``//gvc/NAME`` or ``/org/ORG/gvc/NAME``.
_GVC_REFERENCE = re.compile(r"(?://gvc/|/org/[^/\s]+/gvc/)?[a-z0-9][-a-z0-9]*")


_MISSING = object()


def _get_path(item: Item, dotted: str) -> Any:
    node: Any = item
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def immutable_errors(kind: KindSpec, new: Item, old: Item) -> list[FieldError]:
    return [
        FieldError(path, "cannot be changed after creation")
        for path in kind.schema.immutable
        if _get_path(new, path) != _get_path(old, path)
    ]
